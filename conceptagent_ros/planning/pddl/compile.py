"""Compile unified-planning formulas into plain Python closures over a SymbolicState.

Tree search checks preconditions thousands of times per decision; walking unified-planning's
expression trees with its StateEvaluator costs milliseconds per check. The closures here are
built once per formula and proven equal to unified-planning's evaluator on random states
(test/test_pddl_compile.py); `conceptagent bench-preconditions` prints the speed ratio.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import unified_planning.model as up_model

from conceptagent_ros.errors import PDDLError
from conceptagent_ros.scene.symbolic import ROOT_TYPE, SymbolicState

Binding = dict[str, str]  # parameter or variable name -> object id
Evaluator = Callable[[SymbolicState, Binding], bool]
Term = Callable[[Binding], str]


def _term(node: up_model.FNode) -> Term:
    if node.is_parameter_exp():
        name = node.parameter().name
        return lambda b: b[name]
    if node.is_variable_exp():
        vname = node.variable().name
        return lambda b: b[vname]
    if node.is_object_exp():
        obj = node.object().name
        return lambda b: obj
    raise PDDLError(f"unsupported term in formula: {node}")


def type_name(t: Any) -> str:
    name = getattr(t, "name", None)
    return name if name else ROOT_TYPE


def compile_formula(node: up_model.FNode) -> Evaluator:
    """Return f(state, binding) -> bool for a boolean formula."""
    if node.is_bool_constant():
        value = node.bool_constant_value()
        return lambda s, b: value
    if node.is_fluent_exp():
        name = node.fluent().name
        terms = [_term(a) for a in node.args]
        if not terms:
            atom0 = (name,)
            return lambda s, b: atom0 in s.atoms
        if len(terms) == 1:
            t0 = terms[0]
            return lambda s, b: (name, t0(b)) in s.atoms
        if len(terms) == 2:
            t0, t1 = terms
            return lambda s, b: (name, t0(b), t1(b)) in s.atoms
        return lambda s, b: (name, *[t(b) for t in terms]) in s.atoms
    if node.is_not():
        inner = compile_formula(node.arg(0))
        return lambda s, b: not inner(s, b)
    if node.is_and():
        parts = [compile_formula(a) for a in node.args]
        return lambda s, b: all(p(s, b) for p in parts)
    if node.is_or():
        parts = [compile_formula(a) for a in node.args]
        return lambda s, b: any(p(s, b) for p in parts)
    if node.is_implies():
        lhs, rhs = compile_formula(node.arg(0)), compile_formula(node.arg(1))
        return lambda s, b: (not lhs(s, b)) or rhs(s, b)
    if node.is_iff():
        lhs, rhs = compile_formula(node.arg(0)), compile_formula(node.arg(1))
        return lambda s, b: lhs(s, b) == rhs(s, b)
    if node.is_equals():
        t0, t1 = _term(node.arg(0)), _term(node.arg(1))
        return lambda s, b: t0(b) == t1(b)
    if node.is_exists() or node.is_forall():
        variables = [(v.name, type_name(v.type)) for v in node.variables()]
        body = compile_formula(node.arg(0))
        want_any = node.is_exists()

        def quantified(s: SymbolicState, b: Binding) -> bool:
            domains = [s.objects_of_type(t) for _, t in variables]
            for values in itertools.product(*domains):
                inner = dict(b)
                inner.update(zip((n for n, _ in variables), values))
                if body(s, inner) == want_any:
                    return want_any
            return not want_any

        return quantified
    raise PDDLError(f"unsupported construct in formula: {node}")


class CompiledFormulas:
    """Memoises compiled evaluators per expression (unified-planning hash-conses its FNodes)."""

    def __init__(self) -> None:
        self._cache: dict[up_model.FNode, Evaluator] = {}

    def __call__(self, node: up_model.FNode) -> Evaluator:
        fn = self._cache.get(node)
        if fn is None:
            fn = compile_formula(node)
            self._cache[node] = fn
        return fn
