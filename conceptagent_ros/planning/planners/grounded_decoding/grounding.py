"""Grounding functions over *partial* skill-call text, as Grounded Decoding needs (its footnote 3).

A partial command such as `place(apple_1, fri` is scored by what its completions could be:
- affordance: 1 if some completion is a feasible call in the current state (its preconditions
  hold), `infeasible_weight` if completions exist but none is feasible, 0 if none exists at all
  (an unknown skill or object: a hallucination cannot be decoded);
- safety: 0 if every completion uses a forbidden skill, object or category (a hard constraint);
- preference: 1 for completions that use a preferred object, `other_weight` otherwise (soft).
The decoder multiplies them with the language model's probability.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary

_SEPARATORS = re.compile(r"\s+")
CallTest = Callable[[SkillCall], bool]


@dataclass(frozen=True)
class PartialCall:
    """`pick(app` -> skill 'pick', args (), current 'app'; `pic` -> skill_prefix 'pic'."""

    skill_prefix: str
    skill_done: bool
    args: tuple[str, ...] = ()
    current: str = ""
    closed: bool = False  # the closing parenthesis was written
    valid: bool = True  # False: text that no call can start with


def parse_partial(text: str) -> PartialCall:
    text = _SEPARATORS.sub("", text)
    if "(" not in text:
        return PartialCall(text, False, valid=bool(re.fullmatch(r"[a-z_]*", text)))
    skill, _, rest = text.partition("(")
    closed = rest.endswith(")")
    body = rest[:-1] if closed else rest
    if ")" in body or "(" in body or not re.fullmatch(r"[a-z_]+", skill):
        return PartialCall(skill, True, valid=False)
    parts = body.split(",") if body else [""]
    args, current = tuple(parts[:-1]), parts[-1]
    if closed:
        args, current = (tuple(parts) if body else ()), ""
    ok = all(re.fullmatch(r"[A-Za-z0-9_\-.]+", a) for a in args) and re.fullmatch(r"[A-Za-z0-9_\-.]*", current)
    return PartialCall(skill, True, args, current, closed, bool(ok))


class GroundingFunction(Protocol):
    name: str

    def __call__(self, partial: str) -> float: ...


@dataclass
class CallSpace:
    """The skill calls possible in one state, explored lazily by prefix (memoised)."""

    skills: SkillLibrary
    state: SymbolicState
    verifier: PreconditionVerifier
    objects: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.objects = tuple(sorted(self.state.types))
        self._feasible_cache: dict[tuple[str, tuple[str, ...]], bool] = {}

    def skills_matching(self, partial: PartialCall) -> list[str]:
        if partial.skill_done:
            return [partial.skill_prefix] if self.skills.get(partial.skill_prefix) else []
        return [s.name for s in self.skills if s.name.startswith(partial.skill_prefix)]

    def completions_exist(self, partial: PartialCall, test: CallTest) -> bool:
        """Is there a well-formed completion of `partial` whose call passes `test`?"""
        if not partial.valid:
            return False
        for skill in self.skills_matching(partial):
            spec = self.skills.get(skill)
            assert spec is not None
            if any(a not in self.state.types for a in partial.args):
                continue
            if partial.closed:  # a whole call
                if len(partial.args) == spec.arity and test(SkillCall(skill, partial.args)):
                    return True
            elif not partial.skill_done:  # still typing the skill name
                if self._extend(skill, spec.arity, (), "", test):
                    return True
            elif spec.arity == 0:  # `done(`: only `)` may follow
                if not partial.args and not partial.current and test(SkillCall(skill, ())):
                    return True
            elif len(partial.args) < spec.arity and self._extend(skill, spec.arity, partial.args, partial.current, test):
                return True  # an argument slot is open: it needs an object starting with `current`
        return False

    def _extend(self, skill: str, arity: int, args: tuple[str, ...], prefix: str, test: CallTest) -> bool:
        if len(args) == arity:
            return bool(test(SkillCall(skill, args)))
        return any(self._extend(skill, arity, args + (o,), "", test)
                   for o in self.objects if o.startswith(prefix))

    def feasible(self, call: SkillCall) -> bool:
        key = (call.skill, call.args)
        hit = self._feasible_cache.get(key)
        if hit is None:
            hit = self._feasible_cache[key] = self.verifier.is_feasible(call, self.state)
        return hit


@dataclass
class AffordanceGrounding:
    space: CallSpace
    infeasible_weight: float = 0.02
    name: str = "affordance"

    def __post_init__(self) -> None:
        self.score = lru_cache(maxsize=20000)(self._score)

    def __call__(self, partial: str) -> float:
        return self.score(_SEPARATORS.sub("", partial))

    def _score(self, partial: str) -> float:
        parsed = parse_partial(partial)
        if self.space.completions_exist(parsed, self.space.feasible):
            return 1.0
        if self.space.completions_exist(parsed, lambda call: True):
            return self.infeasible_weight
        return 0.0


@dataclass
class SafetyGrounding:
    """Forbidden skills, object ids or object categories (hard constraint)."""

    space: CallSpace
    forbidden: Collection[str]
    categories: dict[str, str] = field(default_factory=dict)  # object id -> category
    name: str = "safety"

    def allowed(self, call: SkillCall) -> bool:
        if call.skill in self.forbidden:
            return False
        return not any(a in self.forbidden or self.categories.get(a) in self.forbidden for a in call.args)

    def __call__(self, partial: str) -> float:
        if not self.forbidden:
            return 1.0
        parsed = parse_partial(partial)
        return 1.0 if self.space.completions_exist(parsed, self.allowed) else 0.0


@dataclass
class PreferenceGrounding:
    """Soft preference for completions that use preferred objects."""

    space: CallSpace
    preferred: Collection[str]
    other_weight: float = 0.3
    name: str = "preference"

    def __call__(self, partial: str) -> float:
        if not self.preferred:
            return 1.0
        parsed = parse_partial(partial)
        uses = self.space.completions_exist(
            parsed, lambda call: any(a in self.preferred for a in call.args) or call.skill in self.preferred)
        return 1.0 if uses else self.other_weight


def combined(functions: Sequence[GroundingFunction], partial: str) -> float:
    """The product of the grounding functions, stopping at the first zero."""
    value = 1.0
    for fn in functions:
        value *= fn(partial)
        if value == 0.0:
            return 0.0
    return value


def is_complete(text: str) -> bool:
    parsed = parse_partial(text)
    return parsed.valid and parsed.closed
