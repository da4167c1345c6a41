"""Shared helpers for planner tests: a decision context on a built-in scene, and a scripted
PlannerLLM whose answers and call counts the tests control."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.proposal import Critique, DecisionContext, TokenUsage
from conceptagent_ros.planning.roles import Candidates, Choice, PlanSamples, SamplingOptions
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.graph import SceneGraph
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.scene.state_text import describe_state
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall

C = SkillCall.parse


@dataclass
class Setup:
    world: World
    graph: SceneGraph
    verifier: PreconditionVerifier
    effects: EffectModel

    def context(self, instruction: str = "put the apple in the fridge", goal: str | None =
                "(exists (?a - apple ?f - fridge) (in ?a ?f))", history: tuple = (), step: int = 1) -> DecisionContext:
        state = self.graph.symbolic_state()
        parsed = Goal.parse(self.world.domain, goal, self.world.state().types) if goal else None
        return DecisionContext(instruction, parsed, state, describe_state(self.graph), self.graph,
                               self.world.skills, history, step)


def setup(scene: str = "studio_kitchen") -> Setup:
    world = World(load_scene(scene), seed=0)
    graph = SceneGraph(world.scene.rooms, world.robot)
    graph.integrate(world.observe(), 0)
    return Setup(world, graph, PreconditionVerifier(world.domain, world.skills), EffectModel(world.domain))


@dataclass
class ScriptedLLM:
    """Answers from tables; records every question."""

    proposals: dict[tuple[str, ...], list[str]] = field(default_factory=dict)  # planned path -> actions
    scores: dict[tuple[str, ...], float] = field(default_factory=dict)  # plan -> score
    plans: list[list[str]] = field(default_factory=list)
    choice: int = 0
    name: str = "scripted"
    usage: TokenUsage = field(default_factory=TokenUsage)
    asked_expand: list[tuple[str, ...]] = field(default_factory=list)
    asked_critic: list[tuple[str, ...]] = field(default_factory=list)
    asked_choose: list[tuple[str, ...]] = field(default_factory=list)
    samplings: int = 0

    def propose_actions(self, context: DecisionContext, k: int, planned: Sequence[SkillCall] = ()) -> Candidates:
        key = tuple(map(str, planned))
        self.asked_expand.append(key)
        self.usage.add(100, 10, 0.0)
        return Candidates(tuple(C(a) for a in self.proposals.get(key, [])[:k]))

    def critique(self, context: DecisionContext, plan: Sequence[SkillCall],
                 predicted: SymbolicState | None = None) -> Critique:
        key = tuple(map(str, plan))
        self.asked_critic.append(key)
        self.usage.add(100, 10, 0.0)
        return Critique(self.scores.get(key, 0.1), "scripted")

    def sample_plans(self, context: DecisionContext, options: SamplingOptions) -> PlanSamples:
        self.samplings += 1
        self.usage.add(500, 50, 0.0)
        return PlanSamples(tuple(tuple(C(a) if isinstance(a, str) else a for a in p) for p in self.plans))

    def choose(self, context: DecisionContext, options: Sequence[SkillCall]) -> Choice:
        self.asked_choose.append(tuple(map(str, options)))
        self.usage.add(100, 2, 0.0)
        return Choice(min(self.choice, len(options) - 1))
