"""The precondition verifier against an independent judge (test/pddl_judge.py: its own YAML
reading, the `pddl` library's parser, its own interpreter) on random states and calls: every real
skill, and synthetic preconditions covering and, or, not, exists, forall, when, imply and =.
Any mutant of the verifier or the formula compiler that changes a verdict fails here, in seconds."""
from __future__ import annotations

import itertools
import random
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pddl_judge import Judge

from conceptagent_ros.planning.pddl.domain import PDDLDomain, cached_domain
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.symbolic import SymbolicState, load_predicates
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary, SkillParam, SkillSpec, load_skill_library

CONFIG = Path(__file__).resolve().parent.parent / "config"
CATEGORIES = sorted(yaml.safe_load((CONFIG / "categories.yaml").read_text())["categories"]) + ["room"]
PREDICATES = yaml.safe_load((CONFIG / "predicates.yaml").read_text())["predicates"]
SMALL_CATEGORIES = ["fridge", "apple", "cabinet", "countertop", "knife", "sink", "mug", "room"]
assert set(SMALL_CATEGORIES) <= set(CATEGORIES)

SKILLS = load_skill_library()
VERIFIER = PreconditionVerifier(cached_domain(load_predicates(), SKILLS, CATEGORIES), SKILLS)
JUDGE = Judge(CATEGORIES)


@st.composite
def states(draw, max_objects: int = 5):
    """A few objects of a few categories, and any set of atoms over them (consistent or not: the
    verifier must agree with the judge on every state, not only on states a world can reach)."""
    n = draw(st.integers(1, max_objects))
    types = {f"o{i}": draw(st.sampled_from(SMALL_CATEGORIES)) for i in range(n)}
    objects = sorted(types)
    atoms = set()
    for p in PREDICATES:
        arity = len(p.get("params") or [])
        for args in itertools.product(objects, repeat=arity):
            if draw(st.floats(0, 1)) < 0.35:
                atoms.add((p["name"], *args))
    return frozenset(atoms), types


def seeded_states(count: int, max_objects: int, seed: int = 7):
    """The same kind of states as `states`, from a seeded generator: a fast sweep with no shrinking."""
    rng = random.Random(seed)
    for _ in range(count):
        n = rng.randint(1, max_objects)
        types = {f"o{i}": rng.choice(SMALL_CATEGORIES) for i in range(n)}
        objects = sorted(types)
        atoms = frozenset((p["name"], *args) for p in PREDICATES
                          for args in itertools.product(objects, repeat=len(p.get("params") or [])) if rng.random() < 0.35)
        yield atoms, types


def disagreements(verifier: PreconditionVerifier, judge: Judge, names, arity, state_iter) -> list:
    found = []
    for atoms, types in state_iter:
        state = SymbolicState(atoms, types)
        for name in names:
            for args in itertools.product(sorted(types), repeat=arity(name)):
                expected = judge.feasible(name, args, atoms, types)
                call = SkillCall(name, args)
                if verifier.is_feasible(call, state) != expected or verifier.verify(call, state).feasible != expected:
                    found.append((name, args, sorted(atoms), types))
    return found


def test_sweep_every_skill_against_the_judge():
    found = disagreements(VERIFIER, JUDGE, sorted(JUDGE.arity), JUDGE.arity.get, seeded_states(60, 3))
    assert not found, found[:3]


SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(states(), st.sampled_from(sorted(JUDGE.arity)), st.data())
def test_every_skill_agrees_with_the_judge(state, skill, data):
    atoms, types = state
    args = tuple(data.draw(st.sampled_from(sorted(types))) for _ in range(JUDGE.arity[skill]))
    verdict = VERIFIER.verify(SkillCall(skill, args), SymbolicState(atoms, types))
    expected = JUDGE.feasible(skill, args, atoms, types)
    assert verdict.feasible == expected, (skill, args, sorted(atoms), types, verdict.feedback())
    assert bool(verdict.unsatisfied) == (not expected)  # feedback exactly when refused
    assert VERIFIER.is_feasible(SkillCall(skill, args), SymbolicState(atoms, types)) == expected


# One synthetic skill per construct (and a few nestings), over parameters ?a and ?b.
CONSTRUCTS = {
    "c_and_not": "(and (near ?a) (not (open ?a)) (not (holding ?b)))",
    "c_or": "(or (holding ?a) (in ?a ?b) (hand_empty))",
    "c_not_top": "(not (open ?b))",
    "c_exists": "(exists (?r - fridge) (and (in ?a ?r) (open ?r)))",
    "c_exists_any": "(not (exists (?r - object) (and (in ?a ?r) (openable ?r) (not (open ?r)))))",
    "c_forall": "(forall (?x - apple) (imply (in ?x ?b) (cold ?x)))",
    "c_forall_any": "(forall (?x - object) (or (not (in ?x ?a)) (exists (?y - object) (in ?y ?x))))",
    "c_when": "(and (near ?b) (when (openable ?b) (open ?b)))",
    "c_imply": "(imply (holding ?a) (not (= ?a ?b)))",
    "c_equal": "(or (= ?a ?b) (and (near ?a) (near ?b)))",
    "c_two_vars": "(exists (?x - object ?y - object) (and (in ?x ?y) (not (= ?x ?a)) (open ?y)))",
}
SYNTHETIC = [{"name": n, "params": [{"name": "a"}, {"name": "b"}], "precondition": f} for n, f in CONSTRUCTS.items()]
SYNTHETIC_SKILLS = SkillLibrary([SkillSpec(s["name"], "", (SkillParam("a", ""), SkillParam("b", "")), s["precondition"],
                                           "(and)") for s in SYNTHETIC])
SYNTHETIC_VERIFIER = PreconditionVerifier(PDDLDomain(load_predicates(), SYNTHETIC_SKILLS, CATEGORIES), SYNTHETIC_SKILLS)
SYNTHETIC_JUDGE = Judge(CATEGORIES, skills=SYNTHETIC)


def test_sweep_every_construct_against_the_judge():
    found = disagreements(SYNTHETIC_VERIFIER, SYNTHETIC_JUDGE, sorted(CONSTRUCTS), lambda _n: 2, seeded_states(80, 3))
    assert not found, found[:3]


@SETTINGS
@given(states(max_objects=4), st.sampled_from(sorted(CONSTRUCTS)), st.data())
def test_every_formula_construct_agrees_with_the_judge(state, skill, data):
    atoms, types = state
    args = (data.draw(st.sampled_from(sorted(types))), data.draw(st.sampled_from(sorted(types))))
    verdict = SYNTHETIC_VERIFIER.verify(SkillCall(skill, args), SymbolicState(atoms, types))
    expected = SYNTHETIC_JUDGE.feasible(skill, args, atoms, types)
    assert verdict.feasible == expected, (skill, CONSTRUCTS[skill], args, sorted(atoms), types)


def test_each_construct_is_both_true_and_false_somewhere():
    """The constructs are not vacuous: each is satisfied by some state and refused by another."""
    seen: dict[str, set[bool]] = {name: set() for name in CONSTRUCTS}
    types = {"o0": "fridge", "o1": "apple", "o2": "cabinet"}
    objects = sorted(types)
    candidates = [(p["name"], *args) for p in PREDICATES for args in
                  itertools.product(objects, repeat=len(p.get("params") or []))]
    rng = random.Random(0)
    for _ in range(400):
        atoms = frozenset(a for a in candidates if rng.random() < 0.3)
        for name in CONSTRUCTS:
            for args in itertools.product(objects, repeat=2):
                seen[name].add(bool(SYNTHETIC_JUDGE.feasible(name, args, atoms, types)))
    assert all(values == {True, False} for values in seen.values()), seen
