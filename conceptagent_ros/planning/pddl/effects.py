"""Apply a skill's declared PDDL effects to a symbolic state: the planner's forward model.

Effects come from unified-planning's parse (add/delete atoms, `forall`, `when`); conditions are
evaluated on the state before the action, deletes are applied before adds, as PDDL defines.

A quantified effect is not evaluated for every object of the scene where the state says which
objects can matter: a delete can only remove atoms the state holds, so its variables are bound from
the state's atoms of that predicate; an add whose condition requires a positive atom over all its
variables (`(forall (?x) (when (in ?x ?t) (near ?x)))`) is bound from the state's atoms of that one.
On a 200-object scene this turns navigate_to's two quantifiers from 400 condition checks into a
handful. Every binding found this way still passes the variable types and the full condition, so
the result is the exhaustive one (test/test_effect_model.py checks it against unified-planning's
own simulator on random states).
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import unified_planning.model as up_model

from conceptagent_ros.planning.pddl.compile import Binding, CompiledFormulas, _term, type_name
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.scene.symbolic import Atom, SymbolicState
from conceptagent_ros.skills.contract import SkillCall

Slot = tuple[str, "str | Callable[[Binding], str]"]  # ("var", name) or ("bound", term)


@dataclass(frozen=True)
class _Effect:
    variables: list[tuple[str, str]]  # the forall's (name, type)
    condition: Callable[[SymbolicState, Binding], bool]
    predicate: str
    terms: list[Callable[[Binding], str]]
    positive: bool
    # where the variables' values come from: the state's atoms of `source`, matched slot by slot
    # (None: every object of the variables' types)
    source: str | None = None
    slots: tuple[Slot, ...] = ()


def _slots(node: up_model.FNode, variables: set[str]) -> tuple[Slot, ...] | None:
    """Slots of a fluent's arguments when they name every variable; else None."""
    slots: list[Slot] = []
    named = set()
    for arg in node.args:
        if arg.is_variable_exp():
            slots.append(("var", arg.variable().name))
            named.add(arg.variable().name)
        else:
            slots.append(("bound", _term(arg)))
    return tuple(slots) if named >= variables else None


def _required_atom(condition: up_model.FNode, variables: set[str]) -> tuple[str, tuple[Slot, ...]] | None:
    """A positive fluent the condition requires, naming every variable: its predicate and slots."""
    literals = [condition] if condition.is_fluent_exp() else list(condition.args) if condition.is_and() else []
    for literal in literals:
        if literal.is_fluent_exp():
            slots = _slots(literal, variables)
            if slots is not None:
                return literal.fluent().name, slots
    return None


class EffectModel:
    def __init__(self, domain: PDDLDomain):
        self.domain = domain
        self.compiled = CompiledFormulas()
        self._effects: dict[str, list[_Effect]] = {}
        for name, parsed in domain.parsed.items():
            compiled: list[_Effect] = []
            for effect in parsed.action.effects:
                variables = [(v.name, type_name(v.type)) for v in effect.forall]
                fluent = effect.fluent
                positive = effect.value.bool_constant_value()
                source: str | None = None
                slots: tuple[Slot, ...] = ()
                if variables:
                    names = {n for n, _ in variables}
                    own = _slots(fluent, names)
                    if not positive and own is not None:  # a delete removes only atoms the state holds
                        source, slots = fluent.fluent().name, own
                    elif (required := _required_atom(effect.condition, names)) is not None:
                        source, slots = required
                compiled.append(_Effect(variables, self.compiled(effect.condition), fluent.fluent().name,
                                        [_term(a) for a in fluent.args], positive, source, slots))
            self._effects[name] = compiled

    def apply(self, call: SkillCall, state: SymbolicState) -> SymbolicState:
        effects = self._effects.get(call.skill)
        if not effects:
            return state
        binding = dict(zip(self.domain.parsed[call.skill].params, call.args))
        adds: set[Atom] = set()
        deletes: set[Atom] = set()
        for effect in effects:
            for b in _bindings(effect, binding, state):
                if effect.condition(state, b):
                    atom = (effect.predicate, *[t(b) for t in effect.terms])
                    (adds if effect.positive else deletes).add(atom)
        removed = (deletes & state.atoms) - adds  # an atom both deleted and added stays, as PDDL has it
        added = adds - state.atoms
        if not removed and not added:
            return state  # nothing changes: the same state (and its indexes) serves
        child = SymbolicState(frozenset((state.atoms - deletes) | adds), state.types)
        _inherit_index(state, child, removed, added)
        return child


def _inherit_index(parent: SymbolicState, child: SymbolicState, removed: set[Atom], added: set[Atom]) -> None:
    """The child's per-predicate index from its parent's, where the parent has one: a search tree's
    states differ from their parent's in a few atoms, so only the predicates those touch are
    filtered again (building the whole index for every predicted state was most of the search's
    own time)."""
    index = parent.indexed()
    if index is None:
        return
    touched = {a[0] for a in removed} | {a[0] for a in added}
    inherited = {name: atoms for name, atoms in index.items() if name not in touched}
    for name in touched:
        kept = tuple(a for a in index.get(name, ()) if a not in removed)
        inherited[name] = kept + tuple(sorted(a for a in added if a[0] == name))
    child.adopt_index(inherited)


def _bindings(effect: _Effect, binding: Binding, state: SymbolicState) -> Iterator[Binding]:
    """The bindings of the effect's variables worth checking (all of them when it has none)."""
    if not effect.variables:
        yield binding
        return
    names = [n for n, _ in effect.variables]
    if effect.source is None:
        for values in itertools.product(*(state.objects_of_type(t) for _, t in effect.variables)):
            yield {**binding, **dict(zip(names, values))}
        return
    typed = {n: t for n, t in effect.variables}
    for atom in state.atoms_of(effect.source):
        if len(atom) - 1 != len(effect.slots):
            continue
        b = dict(binding)
        for (kind, what), value in zip(effect.slots, atom[1:]):
            if kind == "var":
                assert isinstance(what, str)
                if b.get(what, value) != value or (what not in binding and not state.has_type(value, typed[what])):
                    break
                b[what] = value
            elif what(b) != value:  # type: ignore[operator]
                break
        else:
            yield b
