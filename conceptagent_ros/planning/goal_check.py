"""Goals that can never hold, refused before the first step:
- an atom the goal needs whose argument lacks what the predicate requires (config/predicates.yaml
  `requires`), e.g. `(in fridge_1 apple_1)` -- an apple is not a receptacle -- or
  `(exists (?a - apple ?f - fridge) (in ?f ?a))` with the variables swapped; or lacks what any skill
  needs to make it true (`made_only_if`): `(in desk_1 countertop_1)`, a desk cannot be picked up;
- a fixed property (`static` predicates, the affordances) the goal wants otherwise than it is, e.g.
  `(pickupable desk_1)`: no skill changes it;
- atoms the goal needs together that cannot hold together: an atom and its negation, a thing in two
  places (`functional`), two things held at once (`at_most_one`), an empty hand holding something
  (`excludes`);
- where every object of the world is known, some object of a kind the world has none of
  (`kinds_with_nothing`).

Only atoms the goal needs outright are judged (reached through `and` and `exists`; negated ones
through `not` directly under them): a refused goal is certainly impossible; a goal that passes may
still be.
"""
from __future__ import annotations

from collections.abc import Mapping

import unified_planning.model as up_model

from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.pddl.compile import type_name
from conceptagent_ros.scene.symbolic import ROOT_TYPE, PredicateSpec


def impossible_atoms(
    goal: Goal,
    predicates: Mapping[str, PredicateSpec],
    object_affordances: Mapping[str, frozenset[str]],
    category_affordances: Mapping[str, frozenset[str]],
    object_categories: Mapping[str, str],
) -> list[str]:
    reasons: list[str] = []

    def check(atom: up_model.FNode) -> None:
        spec = predicates.get(atom.fluent().name)
        if spec is None:
            return
        needs = [(arg, needed, "to be") for arg, needed in zip(atom.args, spec.requires)]
        needs += [(arg, needed, "to be moved there: it must be") for arg, needed in zip(atom.args, spec.made_only_if)]
        for arg, needed, verb in needs:
            if needed is None:
                continue
            if arg.is_object_exp():
                name = arg.object().name
                has = object_affordances.get(name)
                what = f"{name} ({object_categories.get(name, '?')})"
            elif arg.is_variable_exp():
                category = getattr(arg.variable().type, "name", ROOT_TYPE)
                if category in (ROOT_TYPE, "room"):
                    continue
                has = category_affordances.get(category)
                what = f"?{arg.variable().name} (a {category})"
            else:
                continue
            if has is not None and needed not in has:
                args = " ".join(f"?{a.variable().name}" if a.is_variable_exp() else str(a) for a in atom.args)
                reasons.append(f"({atom.fluent().name} {args}) needs {what} {verb} {needed}, and it is not")

    positive: list[up_model.FNode] = []
    negative: list[up_model.FNode] = []

    def walk(node: up_model.FNode) -> None:
        if node.is_and():
            for a in node.args:
                walk(a)
        elif node.is_exists():
            walk(node.arg(0))
        elif node.is_fluent_exp():
            check(node)
            positive.append(node)
        elif node.is_not() and node.arg(0).is_fluent_exp():
            negative.append(node.arg(0))

    walk(goal.formula)
    reasons += _fixed_properties(positive, negative, predicates, object_affordances, category_affordances)
    reasons += _incompatible(positive, negative, predicates)
    return reasons


def kinds_with_nothing(goal: Goal, object_categories: Mapping[str, str]) -> list[str]:
    """The kinds the goal needs some object of (an `exists` reached through `and` and `exists`) of
    which no object is known. Where every object of the world is known (the embedded world), such a
    goal can never hold: "(exists (?t - table) (in spoon_1 ?t))" in a kitchen with only a dining
    table."""
    present = set(object_categories.values())
    missing: list[str] = []

    def walk(node: up_model.FNode) -> None:
        if node.is_and():
            for a in node.args:
                walk(a)
        elif node.is_exists():
            for v in node.variables():
                kind = type_name(v.type)
                if kind not in present and kind not in (ROOT_TYPE, "object") and kind not in missing:
                    missing.append(kind)
            walk(node.arg(0))

    walk(goal.formula)
    return missing


def _text(atom: up_model.FNode) -> str:
    args = " ".join(f"?{a.variable().name}" if a.is_variable_exp() else str(a) for a in atom.args)
    return f"({atom.fluent().name}{' ' + args if args else ''})"


def _fixed_properties(positive: list[up_model.FNode], negative: list[up_model.FNode],
                      predicates: Mapping[str, PredicateSpec], object_affordances: Mapping[str, frozenset[str]],
                      category_affordances: Mapping[str, frozenset[str]]) -> list[str]:
    reasons = []
    for atoms, wanted in ((positive, True), (negative, False)):
        for atom in atoms:
            spec = predicates.get(atom.fluent().name)
            if spec is None or not spec.static or len(atom.args) != 1:
                continue
            arg = atom.args[0]
            if arg.is_object_exp():
                has = object_affordances.get(arg.object().name)
            elif arg.is_variable_exp() and wanted:  # "some X is not P" may hold for another X
                has = category_affordances.get(getattr(arg.variable().type, "name", ROOT_TYPE))
            else:
                continue
            if has is not None and (spec.name in has) != wanted:
                state = "is not" if wanted else "is"
                reasons.append(f"{_text(atom) if wanted else '(not ' + _text(atom) + ')'} asks to change a fixed "
                               f"property: {_text(atom)[1:-1].split(' ', 1)[-1]} {state} {spec.name}, and no skill changes that")
    return reasons


def _can_equal(x: up_model.FNode, y: up_model.FNode) -> bool:
    """Whether two goal arguments may name the same object (a variable may take any object of its type)."""
    if x.is_object_exp() and y.is_object_exp():
        return x.object().name == y.object().name
    if x.is_variable_exp() and y.is_variable_exp() and x.variable().name == y.variable().name:
        return True
    kinds = [getattr(n.variable().type if n.is_variable_exp() else n.object().type, "name", ROOT_TYPE) for n in (x, y)]
    return ROOT_TYPE in kinds or kinds[0] == kinds[1]


def _incompatible(positive: list[up_model.FNode], negative: list[up_model.FNode],
                  predicates: Mapping[str, PredicateSpec]) -> list[str]:
    """Pairs of atoms the goal needs together that cannot hold together (ground atoms, and atoms over
    the same variables)."""
    reasons = []
    wanted = {_text(a): a for a in positive}
    for atom in negative:
        if _text(atom) in wanted:
            reasons.append(f"it needs both {_text(atom)} and (not {_text(atom)})")
    atoms = list(wanted.values())
    for i, a in enumerate(atoms):
        spec = predicates.get(a.fluent().name)
        if spec is None:
            continue
        for b in atoms[i + 1:]:
            if b.fluent().name != a.fluent().name or not a.args:
                continue
            if spec.at_most_one and not all(_can_equal(x, y) for x, y in zip(a.args, b.args)):
                reasons.append(f"it needs both {_text(a)} and {_text(b)}, and only one {spec.name} atom holds at a time "
                               f"({spec.description})")
            elif (spec.functional and _text(a).split()[1] == _text(b).split()[1]
                  and not all(_can_equal(x, y) for x, y in zip(a.args[1:], b.args[1:]))):
                reasons.append(f"it needs both {_text(a)} and {_text(b)}: {_text(a).split()[1]} cannot be `{spec.name}` "
                               "two things at once")
        for b in atoms:
            if b.fluent().name in spec.excludes:
                reasons.append(f"it needs both {_text(a)} and {_text(b)}, which never hold together")
    return reasons
