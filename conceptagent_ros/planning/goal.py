"""Task goals: PDDL formulas over object ids (and types), checked on a symbolic state."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import unified_planning.model as up_model

from conceptagent_ros.planning.pddl.compile import CompiledFormulas, type_name
from conceptagent_ros.planning.pddl.domain import PDDLDomain, normalize_formula
from conceptagent_ros.planning.pddl.explain import render
from conceptagent_ros.planning.verifier import top_level_conjuncts
from conceptagent_ros.scene.symbolic import SymbolicState

_COMPILED = CompiledFormulas()


def _constants(node: up_model.FNode, out: set[str]) -> None:
    if node.is_object_exp():
        out.add(node.object().name)
    for arg in node.args:
        _constants(arg, out)


def _fluents(node: up_model.FNode, out: set[str]) -> None:
    if node.is_fluent_exp():
        out.add(node.fluent().name)
    for arg in node.args:
        _fluents(arg, out)


def _quantified_kinds(node: up_model.FNode, out: set[str]) -> None:
    if node.is_exists() or node.is_forall():
        out.update(type_name(v.type) for v in node.variables())
    for arg in node.args:
        _quantified_kinds(arg, out)


@dataclass(frozen=True)
class Goal:
    text: str
    formula: up_model.FNode
    objects: frozenset[str]  # object ids named in the goal
    kinds: frozenset[str] = frozenset()  # the types of the variables it quantifies ("some apple in some fridge")

    @classmethod
    def parse(cls, domain: PDDLDomain, text: str, types: Mapping[str, str]) -> Goal:
        text = normalize_formula(text)
        return cls.of_formula(domain.parse_goal(text, types), text)

    @classmethod
    def of_formula(cls, formula: up_model.FNode, text: str | None = None) -> Goal:
        """A goal built as a formula (a benchmark's, read by unified-planning); its text rendered unless given."""
        names: set[str] = set()
        kinds: set[str] = set()
        _constants(formula, names)
        _quantified_kinds(formula, kinds)
        return cls(render(formula, {}) if text is None else text, formula, frozenset(names), frozenset(kinds))

    @property
    def predicates(self) -> frozenset[str]:
        """The predicates the goal's formula uses."""
        names: set[str] = set()
        _fluents(self.formula, names)
        return frozenset(names)

    def things(self, state: SymbolicState) -> frozenset[str]:
        """The objects the goal is about in `state`: those it names, and those of the kinds it quantifies over."""
        return self.objects | frozenset(o for kind in self.kinds for o in state.objects_of_type(kind))

    def holds(self, state: SymbolicState) -> bool:
        return _COMPILED(self.formula)(state, {})

    def conjuncts(self) -> list[up_model.FNode]:
        return top_level_conjuncts(self.formula)

    def progress(self, state: SymbolicState) -> float:
        """Fraction of the goal's top-level conjuncts that hold (1.0 when the goal holds)."""
        parts = self.conjuncts()
        if not parts:
            return 1.0
        return sum(_COMPILED(p)(state, {}) for p in parts) / len(parts)

    def unmet_parts(self, state: SymbolicState) -> list[up_model.FNode]:
        return [p for p in self.conjuncts() if not _COMPILED(p)(state, {})]

    def unmet(self, state: SymbolicState) -> list[str]:
        return [render(p, {}) for p in self.unmet_parts(state)]
