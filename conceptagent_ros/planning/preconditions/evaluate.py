"""Accuracy and recall of generated preconditions against the hand-written ones, as the paper
reports them (97.4% / 88.1% there): accuracy = correct generated / total generated, recall =
correct generated / total ground truth. Conditions are the top-level conjuncts of each skill's
precondition; two conditions match when they agree on every one of many random states (randomised
model checking, so `(imply A B)` matches `(or (not A) B)` and parameter order inside `and` is free)."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import unified_planning.model as up_model

from conceptagent_ros.planning.pddl.compile import CompiledFormulas
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.planning.pddl.explain import render
from conceptagent_ros.planning.verifier import top_level_conjuncts
from conceptagent_ros.scene.symbolic import PredicateSpec, SymbolicState
from conceptagent_ros.skills.contract import SkillLibrary


@dataclass
class SkillScore:
    skill: str
    generated: int
    ground_truth: int
    correct_generated: int
    recalled_ground_truth: int
    wrong: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


@dataclass
class PreconditionScore:
    skills: list[SkillScore]

    @property
    def generated(self) -> int:
        return sum(s.generated for s in self.skills)

    @property
    def ground_truth(self) -> int:
        return sum(s.ground_truth for s in self.skills)

    @property
    def accuracy(self) -> float:
        return sum(s.correct_generated for s in self.skills) / self.generated if self.generated else 0.0

    @property
    def recall(self) -> float:
        return sum(s.correct_generated for s in self.skills) / self.ground_truth if self.ground_truth else 0.0


def random_states(predicates: Sequence[PredicateSpec], params: Sequence[str], n: int,
                  seed: int) -> list[tuple[SymbolicState, dict[str, str]]]:
    rng = random.Random(seed)
    objects = [f"o{i}" for i in range(len(params) + 2)]
    states = []
    for _ in range(n):
        binding = dict(zip(params, rng.sample(objects, len(params))))
        density = rng.choice((0.2, 0.5, 0.8))
        atoms: set[tuple[str, ...]] = set()
        for p in predicates:
            if p.arity == 0:
                if rng.random() < density:
                    atoms.add((p.name,))
            elif p.arity == 1:
                atoms.update((p.name, o) for o in objects if rng.random() < density)
            else:
                atoms.update((p.name, a, b) for a in objects for b in objects if rng.random() < density / 2)
        states.append((SymbolicState(frozenset(atoms), {o: "object" for o in objects}), binding))
    return states


def score_preconditions(
    skills: SkillLibrary, generated: Mapping[str, str], predicates: Sequence[PredicateSpec],
    types: Sequence[str], samples: int = 300, seed: int = 0,
) -> PreconditionScore:
    truth = PDDLDomain(predicates, skills, types)
    chosen = {name: formula for name, formula in generated.items() if name in truth.parsed}
    gen = PDDLDomain(predicates, skills, types, chosen)
    compiled = CompiledFormulas()
    scores = []
    for name, parsed in truth.parsed.items():
        if name not in chosen:
            continue
        params = list(parsed.params)
        states = random_states(predicates, params, samples, seed)

        def signature(node: up_model.FNode, states: list[tuple[SymbolicState, dict[str, str]]] = states) -> tuple[bool, ...]:
            fn = compiled(node)
            return tuple(fn(s, b) for s, b in states)

        truth_parts = top_level_conjuncts(parsed.precondition)
        gen_parts = top_level_conjuncts(gen.parsed[name].precondition)
        truth_sigs = {signature(c): c for c in truth_parts}
        gen_sigs = [(signature(c), c) for c in gen_parts]
        correct = [c for sig, c in gen_sigs if sig in truth_sigs]
        recalled = {sig for sig, _ in gen_sigs if sig in truth_sigs}
        scores.append(SkillScore(
            name, len(gen_parts), len(truth_parts), len(correct), len(recalled),
            wrong=[render(c, {}) for sig, c in gen_sigs if sig not in truth_sigs],
            missing=[render(c, {}) for sig, c in truth_sigs.items() if sig not in recalled],
        ))
    return PreconditionScore(scores)
