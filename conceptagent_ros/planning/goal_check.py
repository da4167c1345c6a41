"""Goals that can never hold, refused before the first step: an atom the goal needs whose argument
lacks what the predicate requires (config/predicates.yaml `requires`), e.g. `(in fridge_1 apple_1)`
-- an apple is not a receptacle -- or `(exists (?a - apple ?f - fridge) (in ?f ?a))` with the
variables swapped.

Only atoms the goal needs outright are judged (reached through `and` and `exists`, not negated):
a refused goal is certainly impossible; a goal that passes may still be.
"""
from __future__ import annotations

from collections.abc import Mapping

import unified_planning.model as up_model

from conceptagent_ros.planning.goal import Goal
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
        for arg, needed in zip(atom.args, spec.requires):
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
                reasons.append(f"({atom.fluent().name} {args}) needs {what} to be {needed}, and it is not")

    def walk(node: up_model.FNode) -> None:
        if node.is_and():
            for a in node.args:
                walk(a)
        elif node.is_exists():
            walk(node.arg(0))
        elif node.is_fluent_exp():
            check(node)

    walk(goal.formula)
    return reasons
