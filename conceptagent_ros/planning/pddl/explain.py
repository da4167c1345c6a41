"""Say in words why a formula is false (or true) in a state: the feedback an LLM reads.

Example: "(open fridge_1) is false: fridge_1 is closed", or for a quantifier, the witness:
"(not (exists (?r) ...)) is false: ?r = fridge_1: apple_1 is in/on fridge_1, fridge_1 is closed".
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

import unified_planning.model as up_model

from conceptagent_ros.planning.pddl.compile import Binding, CompiledFormulas, type_name
from conceptagent_ros.scene.symbolic import PredicateSpec, SymbolicState

# Extra words for an atom, e.g. the distance behind a false (near apple_1).
AtomHint = Callable[[tuple[str, ...], bool], str | None]


def render(node: up_model.FNode, binding: Binding) -> str:
    """PDDL text of a formula with parameters replaced by their objects."""

    def term(n: up_model.FNode) -> str:
        if n.is_parameter_exp():
            return binding.get(n.parameter().name, "?" + n.parameter().name)
        if n.is_variable_exp():
            return binding.get(n.variable().name, "?" + n.variable().name)
        if n.is_object_exp():
            return n.object().name
        return render(n, binding)

    if node.is_parameter_exp() or node.is_variable_exp() or node.is_object_exp():
        return term(node)
    if node.is_bool_constant():
        return "(and)" if node.bool_constant_value() else "(or)"
    if node.is_fluent_exp():
        return "(" + " ".join([node.fluent().name] + [term(a) for a in node.args]) + ")"
    ops = {"is_not": "not", "is_and": "and", "is_or": "or", "is_implies": "imply", "is_iff": "iff", "is_equals": "="}
    for check, word in ops.items():
        if getattr(node, check)():
            return "(" + " ".join([word] + [term(a) for a in node.args]) + ")"
    if node.is_exists() or node.is_forall():
        word = "exists" if node.is_exists() else "forall"
        inner_binding = {k: v for k, v in binding.items() if k not in {v.name for v in node.variables()}}
        vars_text = " ".join(f"?{v.name} - {type_name(v.type)}" for v in node.variables())
        return f"({word} ({vars_text}) {render(node.arg(0), inner_binding)})"
    return str(node)


class Explainer:
    def __init__(self, predicates: Mapping[str, PredicateSpec], compiled: CompiledFormulas, hint: AtomHint | None = None):
        self.predicates = predicates
        self.compiled = compiled
        self.hint = hint

    def why(self, node: up_model.FNode, state: SymbolicState, binding: Binding, value: bool) -> str:
        """Words for why `node` evaluates to `value` (the value it actually has) in `state`."""
        if node.is_fluent_exp():
            args = tuple(render(a, binding) for a in node.args)
            spec = self.predicates.get(node.fluent().name)
            words = spec.words(args, value) if spec else f"{render(node, binding)} is {str(value).lower()}"
            if self.hint:
                extra = self.hint((node.fluent().name, *args), value)
                if extra:
                    words += f" ({extra})"
            return words
        if node.is_not():
            return self.why(node.arg(0), state, binding, not value)
        if node.is_bool_constant():
            return "it is constant"
        if node.is_equals():
            a, b = (render(x, binding) for x in node.args)
            return f"{a} and {b} are the same object" if value else f"{a} and {b} are different objects"
        if node.is_and() or node.is_or():
            conj = node.is_and()
            if value == conj:  # and=true / or=false: every child has that value
                deciding = list(node.args)
            else:  # and=false / or=true: the children with that value decide it
                deciding = [a for a in node.args if self.compiled(a)(state, binding) == value]
            return ", ".join(self.why(a, state, binding, value) for a in deciding[:4])
        if node.is_implies():
            lhs, rhs = node.arg(0), node.arg(1)
            if not value:
                return f"{self.why(lhs, state, binding, True)}, but {self.why(rhs, state, binding, False)}"
            if not self.compiled(lhs)(state, binding):
                return self.why(lhs, state, binding, False)
            return self.why(rhs, state, binding, True)
        if node.is_exists() or node.is_forall():
            names = [v.name for v in node.variables()]
            types = [type_name(v.type) for v in node.variables()]
            body = node.arg(0)
            # exists=true / forall=false: a witness says it; otherwise say that none was found.
            looking_for = node.is_exists() == value
            if looking_for:
                for values in itertools.product(*(state.objects_of_type(t) for t in types)):
                    inner = dict(binding)
                    inner.update(zip(names, values))
                    if self.compiled(body)(state, inner) == value:
                        assignment = ", ".join(f"?{n} = {v}" for n, v in zip(names, values))
                        return f"{assignment}: {self.why(body, state, inner, value)}"
            kinds = " and ".join(f"?{n} - {t}" for n, t in zip(names, types))
            if node.is_exists():
                return f"no {kinds} makes {render(body, binding)} true"
            return f"every {kinds} makes {render(body, binding)} true"
        return f"{render(node, binding)} is {str(value).lower()}"
