"""The compiled evaluator must agree with unified-planning's own StateEvaluator."""
from __future__ import annotations

import random

import pytest
import unified_planning.model as up_model
from unified_planning.model.walkers import StateEvaluator

from conceptagent_ros.planning.pddl.compile import compile_formula
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.scene.symbolic import SymbolicState, load_predicates
from conceptagent_ros.skills.contract import load_skill_library

OBJECTS = {"fridge_1": "fridge", "apple_1": "apple", "bowl_1": "bowl", "sink_1": "sink"}


@pytest.fixture(scope="module")
def domain() -> PDDLDomain:
    return PDDLDomain(load_predicates(), load_skill_library(), ["fridge", "apple", "bowl", "sink", "cabinet"])


def random_state(rng: random.Random) -> SymbolicState:
    atoms = set()
    for p in load_predicates():
        if p.arity == 0:
            if rng.random() < 0.5:
                atoms.add((p.name,))
        elif p.arity == 1:
            atoms.update((p.name, o) for o in OBJECTS if rng.random() < 0.5)
        else:
            atoms.update((p.name, a, b) for a in OBJECTS for b in OBJECTS if rng.random() < 0.3)
    return SymbolicState(frozenset(atoms), dict(OBJECTS))


def test_compiled_preconditions_equal_unified_planning_on_random_states(domain):
    empty = SymbolicState(frozenset(), dict(OBJECTS))
    problem = domain.parse_problem(empty, "(and)")
    env = problem.environment
    evaluator = StateEvaluator(problem)
    fluents = {f.name: f for f in problem.fluents}
    objects = {o.name: o for o in problem.all_objects}
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        state = random_state(rng)
        values = {}
        for p in load_predicates():
            import itertools

            for args in itertools.product(OBJECTS, repeat=p.arity):
                em = env.expression_manager
                key = em.FluentExp(fluents[p.name], [em.ObjectExp(objects[a]) for a in args])
                values[key] = env.expression_manager.Bool((p.name, *args) in state.atoms)
        up_state = up_model.UPState(values, problem)
        for name, parsed in domain.parsed.items():
            action = problem.action(name)
            args = [rng.choice(list(OBJECTS)) for _ in parsed.params]
            binding = dict(zip(parsed.params, args))
            substitution = {env.expression_manager.ParameterExp(p): env.expression_manager.ObjectExp(objects[a])
                            for p, a in zip(action.parameters, args)}
            formula = domain.parsed[name].precondition
            expected = evaluator.evaluate(formula.substitute(substitution), up_state).bool_constant_value()
            assert compile_formula(formula)(state, binding) == expected, (name, args)
            checked += 1
    assert checked == 60 * len(domain.parsed)


def test_goal_with_typed_exists(domain):
    from conceptagent_ros.planning.goal import Goal

    goal = Goal.parse(domain, "(exists (?a - apple ?f - fridge) (in ?a ?f))", OBJECTS)
    assert not goal.holds(SymbolicState(frozenset({("in", "apple_1", "bowl_1")}), OBJECTS))
    assert goal.holds(SymbolicState(frozenset({("in", "apple_1", "fridge_1")}), OBJECTS))
    assert goal.objects == frozenset()
    assert goal.predicates == frozenset({"in"})
    both = Goal.parse(domain, "(and (heated apple_1) (not (open fridge_1)))", OBJECTS)
    assert both.predicates == frozenset({"heated", "open"})


def test_parse_errors_say_what_is_wrong(domain):
    from conceptagent_ros.errors import PDDLError
    from conceptagent_ros.planning.goal import Goal

    with pytest.raises(PDDLError, match="Undefined name|unknown"):
        Goal.parse(domain, "(in apple_9 fridge_1)", OBJECTS)
    with pytest.raises(PDDLError, match="arity"):
        Goal.parse(domain, "(open apple_1 fridge_1)", OBJECTS)
