"""One task on the embedded world: wire world, scene graph, verifier, proposer and agent; judge
success on the world's true state."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptagent_ros.errors import PDDLError, TaskFileError
from conceptagent_ros.llm.spec import LLMSpec, parse_llm_spec
from conceptagent_ros.planning.agent import Agent, AgentConfig, EpisodeStats, StepReport
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.instruction import clean_instruction, interpret_instruction
from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.planning.planners import PlannerSpec, build_planner
from conceptagent_ros.planning.trace import TraceWriter
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.graph import SceneGraph
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.scene.symbolic import load_predicates
from conceptagent_ros.sim.world import World, domain_types
from conceptagent_ros.skills.contract import load_skill_library


@dataclass
class EpisodeSpec:
    instruction: str
    scene: str = "studio_kitchen"
    goal: str | None = None
    planner: str = "react"
    llm: str = "offline"
    seed: int = 0
    max_steps: int = 40
    failure_rates: Mapping[str, float] = field(default_factory=dict)
    trace: str | Path | None = None
    task_id: str = ""
    preconditions: Mapping[str, str] | None = None  # override the hand-written ones (e.g. generated)


@dataclass
class EpisodeResult:
    task_id: str
    scene: str
    planner: str
    llm: str
    seed: int
    instruction: str
    goal: str
    success: bool
    goal_progress: float
    unmet: list[str]
    stats: EpisodeStats
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    planner_seconds: float  # wall time of the episode minus the LLM's own time
    planner_counters: dict[str, float] = field(default_factory=dict)  # planner-specific figures

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["stats"] = self.stats.to_json()
        return data


def resolve_goal(spec: EpisodeSpec, world: World, llm: LLMSpec) -> Goal:
    types = world.state().types
    text = spec.goal
    if not text:
        text = interpret_instruction(spec.instruction, set(world.domain.types) | {"room"}, types)
    try:
        return Goal.parse(world.domain, text, types)
    except PDDLError as e:
        raise TaskFileError(f"the goal {text!r} does not parse over scene '{world.scene.name}': {e}") from e


def run_episode(spec: EpisodeSpec, on_step: Callable[[StepReport], None] | None = None) -> EpisodeResult:
    instruction = clean_instruction(spec.instruction)
    planner_spec = PlannerSpec.parse(spec.planner)
    llm = parse_llm_spec(spec.llm)
    scene = load_scene(spec.scene)
    skills = load_skill_library()
    world = World(scene, seed=spec.seed, failure_rates=spec.failure_rates, skills=skills)
    goal = resolve_goal(spec, world, llm)
    domain = cached_domain(load_predicates(), skills, domain_types(scene), spec.preconditions)
    verifier = PreconditionVerifier(domain, skills)
    built = build_planner(planner_spec, llm, domain, skills, spec.seed, spec.task_id)
    proposer = built.proposer
    graph = SceneGraph(scene.rooms, world.robot)
    config = AgentConfig(max_steps=spec.max_steps, precondition_grounding=built.grounding)
    trace = TraceWriter(spec.trace) if spec.trace else None
    start = time.perf_counter()
    try:
        agent = Agent(proposer, verifier, skills, world, graph, config, trace, on_step)
        stats = agent.run(instruction, goal)
    finally:
        if trace is not None:
            trace.close()
    truth = world.state()
    wall = time.perf_counter() - start
    return EpisodeResult(
        task_id=spec.task_id, scene=scene.name, planner=str(planner_spec), llm=str(llm), seed=spec.seed,
        instruction=instruction, goal=goal.text, success=goal.holds(truth), goal_progress=goal.progress(truth),
        unmet=goal.unmet(truth), stats=stats, llm_calls=proposer.usage.calls,
        prompt_tokens=proposer.usage.prompt_tokens, completion_tokens=proposer.usage.completion_tokens,
        planner_seconds=max(0.0, wall - proposer.usage.seconds),
        planner_counters=dict(getattr(getattr(proposer, "counters", None), "values", {})),
    )
