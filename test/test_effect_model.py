"""The effect model (planning/pddl/effects.py), which binds quantified effects from the state's own
atoms instead of every object, must give the state unified-planning's own sequential simulator
gives for every skill, on random states of a scene with more objects than any effect names."""
from __future__ import annotations

import io
import itertools
import random

import pytest
from unified_planning.shortcuts import SequentialSimulator, get_environment

from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.scene.symbolic import SymbolicState, load_predicates
from conceptagent_ros.skills.contract import SkillCall, load_skill_library

OBJECTS = {"fridge_1": "fridge", "apple_1": "apple", "apple_2": "apple", "bowl_1": "bowl", "sink_1": "sink",
           "cabinet_1": "cabinet"}


@pytest.fixture(scope="module")
def domain() -> PDDLDomain:
    return PDDLDomain(load_predicates(), load_skill_library(), sorted(set(OBJECTS.values())))


def random_state(rng: random.Random) -> SymbolicState:
    atoms = set()
    for p in load_predicates():
        for args in itertools.product(OBJECTS, repeat=p.arity):
            if rng.random() < (0.5 if p.arity < 2 else 0.25):
                atoms.add((p.name, *args))
    return SymbolicState(frozenset(atoms), dict(OBJECTS))


def test_applied_effects_equal_unified_planning_on_random_states(domain) -> None:
    get_environment().credits_stream = None
    model = EffectModel(domain)
    rng = random.Random(11)
    checked = changed = 0
    for _ in range(25):
        state = random_state(rng)
        problem = domain.parse_problem(state, "(and)").clone()
        for action in problem.actions:  # effects are compared whatever the preconditions say
            action.clear_preconditions()
        objects = {o.name: o for o in problem.all_objects}
        fluents = {f.name: f for f in problem.fluents}
        em = problem.environment.expression_manager
        with SequentialSimulator(problem) as simulator:
            initial = simulator.get_initial_state()
            for name, parsed in domain.parsed.items():
                args = [rng.choice(list(OBJECTS)) for _ in parsed.params]
                after = simulator.apply_unsafe(initial, problem.action(name), [em.ObjectExp(objects[a]) for a in args])
                expected = {(p.name, *xs) for p in load_predicates() for xs in itertools.product(OBJECTS, repeat=p.arity)
                            if after.get_value(em.FluentExp(fluents[p.name], [em.ObjectExp(objects[x]) for x in xs]))
                            .bool_constant_value()}
                ours = model.apply(SkillCall(name, tuple(args)), state)
                assert set(ours.atoms) == expected, (name, args, set(ours.atoms) ^ expected)
                checked += 1
                changed += ours.atoms != state.atoms
    assert checked == 25 * len(domain.parsed)
    assert changed > checked // 2  # the states were ones the skills change, not no-ops


def test_a_predicted_state_inherits_its_parents_index_correctly(domain) -> None:
    """Chained predictions reuse the parent's per-predicate index: it must equal one built afresh."""
    model = EffectModel(domain)
    rng = random.Random(5)
    for _ in range(20):
        state = random_state(rng)
        state.atoms_of("in")  # the parent's index is built
        for _step in range(4):
            name = rng.choice(sorted(domain.parsed))
            call = SkillCall(name, tuple(rng.choice(list(OBJECTS)) for _ in domain.parsed[name].params))
            child = model.apply(call, state)
            fresh = SymbolicState(child.atoms, child.types)
            for p in load_predicates():
                assert set(child.atoms_of(p.name)) == set(fresh.atoms_of(p.name)), (call, p.name)
            state = child


def test_the_overhead_measure_repeats_the_same_decisions_and_keeps_each_ones_fastest_run():
    """`conceptagent overhead` runs the decisions afresh a few times: the seeded search makes the same
    decisions every run, so each decision's fastest run is a time for the same work."""
    from conceptagent_ros.evaluation.planning_overhead import _run_once, crowded_scene, measure

    scene = crowded_scene(objects=60)
    goal = "(exists (?a - apple ?f - fridge) (in ?a ?f))"
    runs = [_run_once(scene, "mcts:expansions=4", 3, "put the apple in the fridge", goal, None) for _ in range(2)]
    assert runs[0].calls == runs[1].calls and len(runs[0].calls) == 3
    assert runs[0].llm_calls == runs[1].llm_calls > 0
    result = measure("mcts:expansions=4", 60, 3, repeats=2, stream=io.StringIO())
    assert result.decisions == 3 and result.llm_calls_per_decision == runs[0].llm_calls / 3
    assert result.overhead_ms_per_decision > 0
