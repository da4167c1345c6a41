"""Is a translated goal the task's goal? Judged by meaning on the task's scene, not by text:
`(in apple_1 fridge_1)` and `(exists (?a - apple ?f - fridge) (in ?a ?f))` are the same goal in a
kitchen with one apple and one fridge, and different ones where there are two apples.

Both goals are grounded over the scene's objects (quantifiers expanded by type); they are the same
goal when they agree on every assignment of truth values to the ground atoms either mentions. Up to
MAX_EXACT_ATOMS atoms every assignment is tried; beyond, a seeded sample of SAMPLES assignments (a
disagreement found is certain, an agreement then only likely, and the verdict says which).
"""
from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import unified_planning.model as up_model

from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.pddl.compile import type_name
from conceptagent_ros.scene.symbolic import Atom, SymbolicState

MAX_EXACT_ATOMS = 14
SAMPLES = 4096


@dataclass(frozen=True)
class Verdict:
    same: bool
    exact: bool  # every assignment tried (else sampled)
    atoms: int
    witness: tuple[Atom, ...] | None = None  # a set of true atoms on which the two goals disagree

    @property
    def label(self) -> str:
        if not self.same:
            return "wrong"
        return "right" if self.exact else "right (sampled)"


def ground_atoms(node: up_model.FNode, types: Mapping[str, str], binding: dict[str, str] | None = None) -> set[Atom]:
    """Every ground atom a formula can read on a state with these objects."""
    binding = binding or {}
    if node.is_fluent_exp():
        return {(node.fluent().name, *(_arg(a, binding) for a in node.args))}
    if node.is_exists() or node.is_forall():
        variables = list(node.variables())
        domains = [[o for o, t in types.items() if type_name(v.type) in ("object", t)] for v in variables]
        atoms: set[Atom] = set()
        for values in itertools.product(*domains):
            inner = {**binding, **{v.name: value for v, value in zip(variables, values)}}
            atoms |= ground_atoms(node.arg(0), types, inner)
        return atoms
    atoms = set()
    for arg in node.args:
        atoms |= ground_atoms(arg, types, binding)
    return atoms


def _arg(node: up_model.FNode, binding: Mapping[str, str]) -> str:
    if node.is_variable_exp():
        return binding[node.variable().name]
    if node.is_object_exp():
        return node.object().name
    return str(node)


def same_goal(a: Goal, b: Goal, types: Mapping[str, str], seed: int = 0) -> Verdict:
    atoms = sorted(ground_atoms(a.formula, types) | ground_atoms(b.formula, types))
    exact = len(atoms) <= MAX_EXACT_ATOMS
    for true_atoms in _assignments(atoms, exact, seed):
        state = SymbolicState(frozenset(true_atoms), dict(types))
        if a.holds(state) != b.holds(state):
            return Verdict(False, exact, len(atoms), tuple(sorted(true_atoms)))
    return Verdict(True, exact, len(atoms))


def _assignments(atoms: list[Atom], exact: bool, seed: int) -> Iterator[list[Atom]]:
    if exact:
        for mask in range(1 << len(atoms)):
            yield [atom for i, atom in enumerate(atoms) if mask >> i & 1]
        return
    rng = random.Random(seed)
    for _ in range(SAMPLES):
        yield [atom for atom in atoms if rng.random() < 0.5]


class SceneGoals:
    """Goals over one scene (all its objects): parsed from PDDL, read from an instruction by the
    no-model translator, and compared by meaning."""

    def __init__(self, scene: str):
        from conceptagent_ros.evaluation.episode import embedded_task_map
        from conceptagent_ros.planning.pddl.domain import cached_domain
        from conceptagent_ros.scene.loader import load_scene
        from conceptagent_ros.scene.symbolic import load_predicates
        from conceptagent_ros.sim.world import World
        from conceptagent_ros.skills.contract import load_skill_library

        skills = load_skill_library()
        self.task_map = embedded_task_map(World(load_scene(scene), skills=skills))
        self.domain = cached_domain(load_predicates(), skills, self.task_map.domain_types())
        self.types = dict(self.task_map.goal_types())

    def parse(self, text: str) -> Goal:
        return Goal.parse(self.domain, text, self.types)

    def translate(self, instruction: str) -> Goal:
        """The offline translator's goal, as `conceptagent run` without --goal; InstructionError if it refuses."""
        from conceptagent_ros.planning.task import resolve_goal

        return resolve_goal(instruction, None, self.domain, self.task_map)

    def verdict(self, a: Goal, b: Goal) -> Verdict:
        return same_goal(a, b, self.types)


def translation_verdict(scene: str, translated: str, reference: str) -> Verdict:
    """The translated goal against the task's goal, on the task's scene (all its objects)."""
    goals = SceneGoals(scene)
    return goals.verdict(goals.parse(translated), goals.parse(reference))
