"""The skill library as a PDDL domain, parsed by unified-planning.

The domain text is generated from config (predicates, categories as types, skills with their
preconditions and effects); unified-planning parses it, so every precondition, effect and goal is
read by a well-kept PDDL parser, and its errors are turned into messages a user (or an LLM) can act on.
"""
from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import unified_planning.model as up_model
from unified_planning.environment import Environment, get_environment
from unified_planning.io import PDDLReader

from conceptagent_ros.errors import PDDLError
from conceptagent_ros.scene.symbolic import ROOT_TYPE, PredicateSpec, SymbolicState, atom_text
from conceptagent_ros.skills.contract import SkillSpec

# Words in PDDL text that are not predicates.
KEYWORDS = {"and", "or", "not", "imply", "exists", "forall", "when", "="}


def normalize_formula(text: str) -> str:
    """Accept the paper's `when` modifier inside preconditions: there it means `imply`."""
    return re.sub(r"\(\s*when\b", "(imply", " ".join(text.split()))


def new_environment() -> Environment:
    # The global environment: unified-planning 1.3's reader builds forall-effect variables there
    # whatever environment it is given, so a private one fails on `(forall ... (when ...))` effects.
    env = get_environment()
    env.credits_stream = None
    # `open` is both a predicate and a skill; PDDL allows it, unified-planning must be told.
    env.error_used_name = False
    return env


@dataclass(frozen=True)
class ParsedSkill:
    name: str
    params: tuple[str, ...]
    precondition: up_model.FNode  # one formula: the conjunction of the action's preconditions
    action: up_model.InstantaneousAction


class PDDLDomain:
    """A PDDL domain for one vocabulary of predicates, types and skills.

    `preconditions` overrides the skills' hand-written preconditions (e.g. with LLM-generated ones).
    """

    def __init__(
        self,
        predicates: Sequence[PredicateSpec],
        skills: Iterable[SkillSpec],
        types: Iterable[str],
        preconditions: Mapping[str, str] | None = None,
        name: str = "household",
    ):
        self.predicates = tuple(predicates)
        self.skills = [s for s in skills if s.name != "done"]
        self.types = sorted({t for t in types if t != ROOT_TYPE})
        chosen = dict(preconditions or {})
        self.precondition_text = {s.name: normalize_formula(chosen.get(s.name, s.precondition)) for s in self.skills}
        self.name = name
        self.text = self._render()
        self.env = new_environment()
        self.problem = self._parse(self.text, None)
        self.parsed = {}
        for skill in self.skills:
            action = self.problem.action(skill.name)
            conds = list(action.preconditions)  # type: ignore[attr-defined]
            formula = self.env.expression_manager.And(conds) if conds else self.env.expression_manager.TRUE()
            self.parsed[skill.name] = ParsedSkill(
                skill.name, tuple(p.name for p in action.parameters), formula, action  # type: ignore[arg-type]
            )

    # -- text -----------------------------------------------------------------------------------
    def _render(self) -> str:
        lines = [f"(define (domain {self.name})", " (:requirements :adl)"]
        if self.types:
            lines.append(" (:types " + " ".join(self.types) + " - object)")
        lines.append(" (:predicates")
        for p in self.predicates:
            lines.append("  (" + " ".join([p.name] + [f"?{a} - object" for a in p.params]) + ")")
        lines.append(" )")
        for s in self.skills:
            params = " ".join(f"?{p.name} - object" for p in s.params)
            lines.append(f" (:action {s.name}")
            lines.append(f"  :parameters ({params})")
            lines.append(f"  :precondition {self.precondition_text[s.name]}")
            lines.append(f"  :effect {s.effect})")
        lines.append(")")
        return "\n".join(lines)

    def problem_text(self, state: SymbolicState, goal: str, name: str = "task") -> str:
        objects = " ".join(f"{o} - {t if t in self.types else ROOT_TYPE}" for o, t in sorted(state.types.items()))
        init = " ".join(atom_text(a) for a in sorted(state.atoms))
        return (f"(define (problem {name}) (:domain {self.name})\n (:objects {objects})\n"
                f" (:init {init})\n (:goal {normalize_formula(goal)}))")

    # -- parsing --------------------------------------------------------------------------------
    def _parse(self, domain_text: str, problem_text: str | None) -> up_model.Problem:
        reader = PDDLReader(self.env)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the `open` name clash warning, expected
                return reader.parse_problem_string(domain_text, problem_text)
        except Exception as e:  # unified-planning raises SyntaxError, ParseException, UP*Error
            raise PDDLError(_clean_parser_message(e)) from e

    def parse_problem(self, state: SymbolicState, goal: str) -> up_model.Problem:
        return self._parse(self.text, self.problem_text(state, goal))

    def parse_goal(self, goal: str, types: Mapping[str, str]) -> up_model.FNode:
        """Parse a goal formula over the given objects (id -> type)."""
        empty = SymbolicState(frozenset(), dict(types))
        problem = self.parse_problem(empty, goal)
        goals = list(problem.goals)
        return self.env.expression_manager.And(goals) if goals else self.env.expression_manager.TRUE()

    def precondition(self, skill: str) -> ParsedSkill:
        return self.parsed[skill]

    def predicate(self, name: str) -> PredicateSpec | None:
        for p in self.predicates:
            if p.name == name:
                return p
        return None


def _clean_parser_message(error: Exception) -> str:
    text = " ".join(str(error).split())
    text = text.replace("Not able to handle:", "unknown predicate or construct:")
    found = re.search(r"Found invalid expression: ([^.\s]+)", text)
    if found:
        text = f"unknown object or name '{found.group(1)}' ({text})"
    if "Undefined name" in text:
        text += " (a variable or object that is not a parameter, a quantified variable or a known object)"
    return text or type(error).__name__


_DOMAIN_CACHE: dict[tuple[object, ...], PDDLDomain] = {}


def cached_domain(
    predicates: Sequence[PredicateSpec],
    skills: Iterable[SkillSpec],
    types: Iterable[str],
    preconditions: Mapping[str, str] | None = None,
) -> PDDLDomain:
    """Parsing a domain takes a fraction of a second; episodes on the same vocabulary share one."""
    skills = tuple(skills)
    key = (tuple(predicates), skills, tuple(sorted(set(types))), tuple(sorted((preconditions or {}).items())))
    domain = _DOMAIN_CACHE.get(key)
    if domain is None:
        domain = PDDLDomain(predicates, skills, types, preconditions)
        _DOMAIN_CACHE[key] = domain
    return domain
