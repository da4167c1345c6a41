"""One task on the embedded world: the world plays the robot for planning/task.py's loop, and
success is judged on the world's true state."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from conceptagent_ros.bodies.factory import make_body
from conceptagent_ros.llm.spec import LLMSpec, parse_llm_spec
from conceptagent_ros.planning.agent import EpisodeStats, StepReport
from conceptagent_ros.planning.free_text.known import known_places
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.task import TaskMap, TaskRequest, prepare_task, run_task
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World, WorldRealism
from conceptagent_ros.skills.contract import load_skill_library


@dataclass
class EpisodeSpec:
    """One task on the embedded world: the request the planner gets (planning/task.py) and the
    world's own settings."""

    request: TaskRequest
    scene: str = "studio_kitchen"
    failure_rates: Mapping[str, float] = field(default_factory=dict)
    trace: str | Path | None = None
    # Success judged on this goal instead of the one the agent pursued: the task's own goal, when
    # the agent's was translated from the instruction (bench --translate).
    judge_goal: str | None = None
    # "truth": the agent reads what the world shows; "camera": it sees through synthetic RGB-D frames
    # fused into a 3D object map (bodies/embedded/perceiving_robot.py). With a household body in PyBullet: "truth"
    # is the body's own view of what its mast camera segments, "camera" those images fused by the
    # perception pipeline into the robot's belief (bodies/household/perceiving_body.py)
    perception: str = "truth"
    # How the world answers a careless action; None: as the simulated model's profile asks (its
    # `world` section), the world as it is for any other model
    realism: WorldRealism | None = None
    # "symbolic": skills change the embedded world's symbols; "pybullet": a body in PyBullet does
    # them, seeing through its own cameras, and the goal is judged on PyBullet's state: in a household
    # scene conceptagent_mm in the exported world (bodies/household/body.py), at the tabletop the
    # Panda at the table the scene lays out (bodies/tabletop/tabletop_body.py)
    body: str = "symbolic"
    gui: bool = False  # a physical body in PyBullet's window
    sensing: str | None = None  # a physical body's senses: ideal or realistic; None: its own (bodies/sensing.py)
    picture: str | Path | None = None  # a household body's top view (its path, the final scene) to this PNG

    @classmethod
    def of(cls, instruction: str, **settings: Any) -> EpisodeSpec:
        """An episode from keyword settings of both kinds: the task request's (planner, llm, seed, ...)
        go to the request, the rest to the episode."""
        request_fields = {f.name for f in fields(TaskRequest)}
        asked = {k: v for k, v in settings.items() if k in request_fields}
        return cls(TaskRequest(instruction, **asked), **{k: v for k, v in settings.items() if k not in request_fields})


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
    judged_on: str = ""  # the goal success was judged on, where it is not `goal`
    wall_seconds: float = 0.0  # the episode's wall time, the language model's included
    llm_seconds: float = 0.0  # the language model's own time (the sum over its calls)
    # every executed call that failed, as "skill:KIND" (KIND: its named error code, else its failure kind)
    skill_failures: list[str] = field(default_factory=list)
    # the goal's predicates a physical body judged on its own flags (a symbolic effect, not physics):
    # such an episode is reported apart from the physical figures
    symbolic_goal: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["stats"] = self.stats.to_json()
        return data


def world_realism(spec: EpisodeSpec, llm: LLMSpec) -> WorldRealism:
    """The episode's choice of world: its own setting, else the simulated profile's `world`."""
    if spec.realism is not None:
        return spec.realism
    if llm.kind == "simulated":
        profile = llm.simulated
        return WorldRealism.from_settings(profile.world_settings, f"simulated profile '{profile.name}' world")
    return WorldRealism()


def embedded_task_map(world: World) -> TaskMap:
    # Goal constants may name any object of the scene, seen or not (task files do: apple_1).
    return TaskMap(world.scene.rooms, frozenset(world.scene.categories()), dict(world.state().types),
                   {oid: o.affordances for oid, o in world.scene.objects.items()},
                   {oid: dict(o.attributes) for oid, o in world.scene.objects.items() if o.attributes},
                   known_places=known_places(world.scene.objects.values()))


def run_episode(spec: EpisodeSpec, on_step: Callable[[StepReport], None] | None = None,
                cancel: threading.Event | None = None) -> EpisodeResult:
    request = spec.request
    llm = request.llm if isinstance(request.llm, LLMSpec) else parse_llm_spec(request.llm)  # once per episode
    request = replace(request, llm=llm)
    scene = load_scene(spec.scene)
    skills = load_skill_library()
    world = World(scene, seed=request.seed, failure_rates=spec.failure_rates, skills=skills, realism=world_realism(spec, llm))
    task = prepare_task(request, embedded_task_map(world), skills)
    judge_goal = Goal.parse(task.domain, spec.judge_goal, embedded_task_map(world).goal_types()) \
        if spec.judge_goal else None
    if spec.perception == "external":
        raise ValueError("perception external is for a node that takes the body's images: truth or camera here")
    body = make_body(scene, spec.body, spec.perception, world=world, seed=request.seed, gui=spec.gui,
                     failure_rates=spec.failure_rates, sensing=spec.sensing)
    failures: list[str] = []

    def step(report: StepReport) -> None:
        if report.executed and report.outcome is not None and not report.outcome.success:
            failures.append(f"{report.outcome.call.skill}:{report.outcome.kind}")
        if on_step is not None:
            on_step(report)

    try:
        start = time.perf_counter()
        outcome = run_task(task, body, world.robot, step, cancel, spec.trace)
        wall = time.perf_counter() - start
        truth = body.judged_state()
        symbolic_goal = body.symbolic_part((judge_goal or outcome.goal).predicates)
        if spec.picture is not None:
            body.picture(Path(spec.picture), title=request.task_id or task.instruction,
                         goal_objects=(judge_goal or outcome.goal).objects)
    finally:
        body.close()
    judged = judge_goal or outcome.goal
    return EpisodeResult(
        task_id=request.task_id, scene=scene.name, planner=str(task.planner), llm=str(task.llm), seed=request.seed,
        instruction=task.instruction, goal=outcome.goal.text, success=judged.holds(truth),
        goal_progress=judged.progress(truth), unmet=judged.unmet(truth), stats=outcome.stats,
        llm_calls=outcome.llm_calls, prompt_tokens=outcome.prompt_tokens, completion_tokens=outcome.completion_tokens,
        planner_seconds=max(0.0, wall - outcome.llm_seconds), planner_counters=outcome.planner_counters,
        judged_on=judged.text if spec.judge_goal else "", wall_seconds=wall, llm_seconds=outcome.llm_seconds,
        skill_failures=failures, symbolic_goal=symbolic_goal,
    )
