"""An independent judge of skill preconditions, for the tests only.

It shares nothing with the product's verifier: it reads config/skills.yaml and predicates.yaml
with PyYAML itself, parses the PDDL with the `pddl` library (not unified-planning), and evaluates
formulas with its own interpreter below (not planning/pddl/compile.py). A bug in the verifier or
the compiler therefore shows up as a disagreement with this judge instead of passing both sides.

Semantics it fixes on its own: `when` inside a precondition means `imply` (the paper's usage);
types are flat (an object has exactly its category; `object` means anything); a state is a set of
atoms (tuples) plus each object's type.
"""
from __future__ import annotations

import itertools
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml
from pddl import parse_domain
from pddl.logic.base import And, ExistsCondition, ForallCondition, Imply, Not, Or
from pddl.logic.predicates import EqualTo, Predicate

CONFIG = Path(__file__).resolve().parent.parent / "config"
ANY = "object"


def _untyped(text: str) -> str:
    text = re.sub(r"\(\s*when\b", "(imply", " ".join(text.split()))
    return re.sub(r"\s-\s+object\b", "", text)  # `object` is the untyped default in the judge's domain


class Judge:
    def __init__(self, types: Iterable[str], skills: list[dict] | None = None, predicates: list[dict] | None = None,
                 constants: Mapping[str, str] | None = None):
        skills = skills if skills is not None else yaml.safe_load((CONFIG / "skills.yaml").read_text())["skills"]
        predicates = (predicates if predicates is not None
                      else yaml.safe_load((CONFIG / "predicates.yaml").read_text())["predicates"])
        self.arity = {s["name"]: len(s.get("params") or []) for s in skills}
        declared = sorted({t for t in types if t != ANY})
        preds = " ".join("(" + p["name"] + "".join(f" ?{a}" for a in p.get("params") or []) + ")" for p in predicates)
        actions = []
        for s in skills:
            params = " ".join(f"?{p['name']}" for p in s.get("params") or [])
            pre = _untyped(str(s.get("precondition") or "(and)"))
            actions.append(f"(:action {s['name']} :parameters ({params}) :precondition {pre} :effect (and))")
        text = ("(define (domain judge) (:requirements :typing :negative-preconditions :disjunctive-preconditions "
                ":existential-preconditions :universal-preconditions :equality)"
                f" (:types {' '.join(declared)})"
                + (f" (:constants {' '.join(f'{c} - {t}' for c, t in sorted(constants.items()))})" if constants else "")
                + f" (:predicates {preds}) {' '.join(actions)})")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "domain.pddl"
            path.write_text(text)
            self.actions = {a.name: a for a in parse_domain(path).actions}

    def feasible(self, skill: str, args: tuple[str, ...], atoms: frozenset, types: Mapping[str, str]) -> bool | None:
        """None where the call cannot be grounded (unknown skill, wrong arity, unknown object)."""
        action = self.actions.get(skill)
        if action is None or len(args) != len(action.parameters) or any(a not in types for a in args):
            return None
        binding = {v.name: a for v, a in zip(action.parameters, args)}
        return self.holds(action.precondition, binding, atoms, types)

    def holds(self, f, b: dict, atoms: frozenset, types: Mapping[str, str]) -> bool:  # noqa: ANN001
        def term(t) -> str:  # noqa: ANN001
            return b[t.name] if t.name in b else t.name

        if f is None:
            return True
        if isinstance(f, Predicate):
            return (f.name, *(term(t) for t in f.terms)) in atoms
        if isinstance(f, EqualTo):
            return term(f.left) == term(f.right)
        if isinstance(f, Not):
            return not self.holds(f.argument, b, atoms, types)
        if isinstance(f, And):
            return all(self.holds(o, b, atoms, types) for o in f.operands)
        if isinstance(f, Or):
            return any(self.holds(o, b, atoms, types) for o in f.operands)
        if isinstance(f, Imply):
            *premises, conclusion = f.operands
            return not all(self.holds(p, b, atoms, types) for p in premises) or self.holds(conclusion, b, atoms, types)
        if isinstance(f, (ExistsCondition, ForallCondition)):
            variables = sorted(f.variables, key=lambda v: v.name)
            domains = [[o for o, t in types.items() if not v.type_tags or t in v.type_tags or ANY in v.type_tags]
                       for v in variables]
            results = (self.holds(f.condition, {**b, **{v.name: o for v, o in zip(variables, combo)}}, atoms, types)
                       for combo in itertools.product(*domains))
            return any(results) if isinstance(f, ExistsCondition) else all(results)
        raise TypeError(f"the judge does not know {type(f).__name__}: {f}")


def goal_holds(goal: str, atoms: frozenset, types: Mapping[str, str]) -> bool:
    """A task's goal on a state, judged as the precondition of an action that names the state's
    objects as constants (the `pddl` library parses quantified formulas in domains, not in goals)."""
    categories = set(yaml.safe_load((CONFIG / "categories.yaml").read_text())["categories"]) | set(types.values())
    judge = Judge(categories, skills=[{"name": "reach_goal", "params": [], "precondition": goal}], constants=types)
    verdict = judge.feasible("reach_goal", (), atoms, types)
    assert verdict is not None
    return verdict
