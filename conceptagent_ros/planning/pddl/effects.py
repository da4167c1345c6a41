"""Apply a skill's declared PDDL effects to a symbolic state: the planner's forward model.

Effects come from unified-planning's parse (add/delete atoms, `forall`, `when`); conditions are
evaluated on the state before the action, deletes are applied before adds, as PDDL defines.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable

from conceptagent_ros.planning.pddl.compile import Binding, CompiledFormulas, _term, type_name
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.scene.symbolic import Atom, SymbolicState
from conceptagent_ros.skills.contract import SkillCall

_Effect = tuple[list[tuple[str, str]], Callable[[SymbolicState, Binding], bool], str, list[Callable[[Binding], str]], bool]


class EffectModel:
    def __init__(self, domain: PDDLDomain):
        self.domain = domain
        self.compiled = CompiledFormulas()
        self._effects: dict[str, list[_Effect]] = {}
        for name, parsed in domain.parsed.items():
            compiled: list[_Effect] = []
            for effect in parsed.action.effects:
                variables = [(v.name, type_name(v.type)) for v in effect.forall]
                condition = self.compiled(effect.condition)
                fluent = effect.fluent
                terms = [_term(a) for a in fluent.args]
                compiled.append((variables, condition, fluent.fluent().name, terms, effect.value.bool_constant_value()))
            self._effects[name] = compiled

    def apply(self, call: SkillCall, state: SymbolicState) -> SymbolicState:
        effects = self._effects.get(call.skill)
        if not effects:
            return state
        binding = dict(zip(self.domain.parsed[call.skill].params, call.args))
        adds: set[Atom] = set()
        deletes: set[Atom] = set()
        for variables, condition, name, terms, positive in effects:
            domains = [state.objects_of_type(t) for _, t in variables]
            for values in itertools.product(*domains):
                b = binding if not variables else {**binding, **dict(zip((n for n, _ in variables), values))}
                if condition(state, b):
                    atom = (name, *[t(b) for t in terms])
                    (adds if positive else deletes).add(atom)
        return SymbolicState(frozenset((state.atoms - deletes) | adds), state.types)
