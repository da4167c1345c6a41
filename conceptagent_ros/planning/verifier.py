"""Precondition grounding (ConceptAgent section III-C): check a skill call against its PDDL
preconditions in the perceived state, and say which ones fail, in words the LLM reads."""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import unified_planning.model as up_model

from conceptagent_ros.planning.pddl.compile import CompiledFormulas
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.pddl.explain import AtomHint, Explainer, render
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary


@dataclass(frozen=True)
class UnsatisfiedCondition:
    formula: str  # grounded PDDL, e.g. "(open fridge_1)"
    reason: str  # e.g. "fridge_1 is closed"
    remedy: str = ""  # a call whose PDDL effect makes it true, e.g. "open(fridge_1)"

    def __str__(self) -> str:
        fix = f" ({self.remedy} would make it true)" if self.remedy else ""
        return f"{self.formula} is false: {self.reason}{fix}"


@dataclass(frozen=True)
class Verdict:
    call: SkillCall
    feasible: bool
    unsatisfied: tuple[UnsatisfiedCondition, ...] = ()
    invalid_call: str | None = None  # the call itself is wrong: unknown skill or object, arity

    def feedback(self) -> str:
        if self.invalid_call:
            return f"{self.call} is not a valid action: {self.invalid_call}"
        if self.feasible:
            return f"{self.call}: all preconditions hold"
        return f"{self.call} was not executed because its preconditions do not hold: " + "; ".join(
            str(u) for u in self.unsatisfied
        )

    def to_json(self) -> dict[str, object]:
        return {
            "feasible": self.feasible,
            "invalid_call": self.invalid_call,
            "unsatisfied": [{"formula": u.formula, "reason": u.reason, "remedy": u.remedy} for u in self.unsatisfied],
        }


def top_level_conjuncts(node: up_model.FNode) -> list[up_model.FNode]:
    if node.is_and():
        out: list[up_model.FNode] = []
        for a in node.args:
            out.extend(top_level_conjuncts(a))
        return out
    if node.is_bool_constant() and node.bool_constant_value():
        return []
    return [node]


def check_call(call: SkillCall, skills: SkillLibrary, state: SymbolicState) -> str | None:
    """Why a call cannot even be grounded (unknown skill, wrong arity, unknown objects), or None."""
    spec = skills.get(call.skill)
    if spec is None:
        return f"there is no skill '{call.skill}'; the skills are: {', '.join(skills.names())}"
    if len(call.args) != spec.arity:
        return f"{spec.name} takes {spec.arity} argument(s) {spec.signature()}, got {len(call.args)}"
    unknown = [a for a in call.args if a not in state.types]
    if unknown:
        return (f"unknown object(s) {', '.join(repr(a[:60]) for a in unknown)}; "
                "use the ids of objects the robot has observed")
    return None


class PreconditionVerifier:
    """Checks skill calls against one precondition set (hand-written or LLM-generated)."""

    def __init__(self, domain: PDDLDomain, skills: SkillLibrary, hint: AtomHint | None = None):
        self.domain = domain
        self.skills = skills
        self.compiled = CompiledFormulas()
        self.explainer = Explainer({p.name: p for p in domain.predicates}, self.compiled, hint)
        self._effects: EffectModel | None = None  # built on the first refusal that needs it
        self._conjuncts = {
            name: [(c, self.compiled(c)) for c in top_level_conjuncts(parsed.precondition)]
            for name, parsed in domain.parsed.items()
        }

    def set_hint(self, hint: AtomHint | None) -> None:
        self.explainer.hint = hint

    def is_feasible(self, call: SkillCall, state: SymbolicState) -> bool:
        """The fast path for search: no words, no validation beyond what evaluation needs."""
        conjuncts = self._conjuncts.get(call.skill)
        if conjuncts is None:
            return call.skill == "done"
        binding = dict(zip(self.domain.parsed[call.skill].params, call.args))
        return all(fn(state, binding) for _, fn in conjuncts)

    def feasible_calls(self, state: SymbolicState) -> list[SkillCall]:
        """Every call over the known objects whose preconditions hold in `state` (`done()` included):
        the choices a grounded proposer picks from. Evaluation stops at a call's first false
        conjunct, so a few thousand two-object calls take milliseconds."""
        ids = sorted(state.types)
        return [call for spec in self.skills
                for call in (SkillCall(spec.name, args) for args in itertools.product(ids, repeat=spec.arity))
                if self.is_feasible(call, state)]

    def verify(self, call: SkillCall, state: SymbolicState) -> Verdict:
        problem = check_call(call, self.skills, state)
        if problem:
            return Verdict(call, False, invalid_call=problem)
        if call.skill not in self._conjuncts:  # `done` has no preconditions
            return Verdict(call, True)
        binding = dict(zip(self.domain.parsed[call.skill].params, call.args))
        failed = [
            UnsatisfiedCondition(render(c, binding), self.explainer.why(c, state, binding, False),
                                 self._remedy(c, binding, state))
            for c, fn in self._conjuncts[call.skill]
            if not fn(state, binding)
        ]
        return Verdict(call, not failed, tuple(failed))

    def _remedy(self, condition: up_model.FNode, binding: dict[str, str], state: SymbolicState) -> str:
        """A call over the condition's own objects whose effects make a false literal true (near x:
        navigate_to(x); open x: open(x)), read off the domain's effects; '' where none is that simple.
        ConceptAgent feeds back what is unsatisfied; naming what satisfies it is what a small model
        needs to act on that (it otherwise retries the refused call)."""
        positive = not condition.is_not()
        atom_node = condition if positive else condition.arg(0)
        if not atom_node.is_fluent_exp():
            return ""
        words = render(atom_node, binding).strip("()").split()
        atom, args = tuple(words), words[1:]
        if not args or any(a.startswith("?") for a in args):
            return ""
        if self._effects is None:
            self._effects = EffectModel(self.domain)
        for skill in self.skills.actionable():
            for combo in itertools.product(args, repeat=skill.arity):
                candidate = SkillCall(skill.name, combo)
                after = self._effects.apply(candidate, state)
                if (atom in after.atoms) == positive and (atom in state.atoms) != positive:
                    return str(candidate)
        return ""

    def verify_all(self, calls: Sequence[SkillCall], state: SymbolicState) -> list[Verdict]:
        return [self.verify(c, state) for c in calls]
