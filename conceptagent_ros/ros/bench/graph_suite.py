"""A task suite through the ROS graph: `conceptagent ros suite`.

The robot stand-in, the planner node and (with `--perception camera`) the perception node and the
scene graph node are brought up once, on a DDS domain of their own. Each task is then what a user
would do on a robot: the stand-in is switched to the task's scene and reset over its `reset`
service (and the perception node's map cleared over `perception/reset`, the scene graph node's
memory over `scene_graph/reset`), the stand-in looks around, and the task goes to the planner as an
ExecuteTask goal with its instruction and PDDL goal. The planner sees only the `scene_graph` topic;
with the camera that graph is what the scene graph node built from what the perception node fused
of the stand-in's RGB-D frames, as on a real robot. Success is judged afterwards on the stand-in's
simulated world, with the task's goal over the world's own ids, not on what the planner believed.
"""
from __future__ import annotations

import csv
import io
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

from conceptagent_ros.atomic_files import write_atomic
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.episode import embedded_task_map
from conceptagent_ros.evaluation.tasks import Task
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.ros.bringup import NAMESPACE, GraphOptions, RosGraph, bring_up, init_context
from conceptagent_ros.ros.client_node import ClientNode
from conceptagent_ros.ros.futures import wait_done
from conceptagent_ros.ros.task_client import TaskClientError, send_task
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.scene.symbolic import load_predicates
from conceptagent_ros.sim.world import World

DETECTORS = ("oracle", "sim_paint")  # what can see the stand-in's synthetic camera
LOOK_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class GraphSuiteConfig:
    perception: str = "truth"  # truth | camera (through the perception node)
    detector: str = "oracle"  # with the camera: oracle (instance ids) | sim_paint (colours)
    planner: str = "react"
    llm: str = "offline"
    max_steps: int = 40
    timeout: float = 300.0  # seconds per task

    def __post_init__(self) -> None:
        if self.perception not in ("truth", "camera"):
            raise ConceptAgentError(f"perception must be truth or camera, not {self.perception!r}")
        if self.detector not in DETECTORS:
            raise ConceptAgentError(f"the stand-in's camera is seen by {' or '.join(DETECTORS)}, not {self.detector!r}")


@dataclass
class GraphEpisode:
    task_id: str
    scene: str
    instruction: str
    success: bool  # judged on the stand-in's world
    believed_success: bool  # what the planner reported
    steps: int
    seconds: float
    unmet: list[str] = field(default_factory=list)  # of the task's goal, in the world
    error: str = ""
    frames: int = 0  # camera frames the perception node fused for this task
    executed: list[str] = field(default_factory=list)  # the skills the stand-in ran, in order
    # the goal's predicates a physical body judged on its own flags: such a task is no physical success
    symbolic_goal: list[str] = field(default_factory=list)


def judge_on_world(world: World, goal_text: str) -> tuple[bool, list[str]]:
    """The task's goal over the world's own ids, on its true state."""
    task_map = embedded_task_map(world)
    domain = cached_domain(load_predicates(), world.skills, task_map.domain_types())
    goal = Goal.parse(domain, goal_text, task_map.goal_types())
    state = world.state()
    return goal.holds(state), goal.unmet(state)


def _perception_parameters(config: GraphSuiteConfig, tasks: Sequence[Task], folder: Path) -> dict[str, Any]:
    spec = folder / "perception.yaml"
    spec.write_text(yaml.safe_dump({"detector": {"kind": config.detector}, "segmenter": {"kind": "box"},
                                    "embedder": {"kind": "none"}}))
    vocabulary = sorted({o.category for scene in {t.scene for t in tasks} for o in load_scene(scene).objects.values()})
    return {"config": str(spec), "vocabulary": vocabulary}


def options_nodes(options: GraphOptions) -> list[str]:
    names = ["robot stand-in", "planner"]
    if options.perception is not None:
        names.append("perception")
    if options.scene_graph_node() is not None:
        names.append("scene graph")
    return names


class _Operator(ClientNode):
    """The client side: resets over services, tasks over the action, as a user's tools would."""

    def __init__(self, graph: RosGraph, namespace: str):
        super().__init__("suite_operator", namespace, context=graph.context)
        self.robot_reset = self.node.create_client(Trigger, "reset")
        self.perception_reset = self.node.create_client(Trigger, "perception/reset")
        self.scene_graph_reset = self.node.create_client(Trigger, "scene_graph/reset")

    def call(self, client: Any, what: str) -> None:
        if not client.wait_for_service(timeout_sec=10.0):
            raise ConceptAgentError(f"{client.srv_name} is not available")
        future = client.call_async(Trigger.Request())
        if not wait_done(future, 10.0) or future.result() is None:
            raise ConceptAgentError(f"{client.srv_name} did not answer")
        if not future.result().success:
            raise ConceptAgentError(f"{what} failed: {future.result().message}")


def _wait_for_the_first_look(robot: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not robot.looked:
        if time.monotonic() > deadline:
            raise ConceptAgentError(f"the stand-in did not finish its first look within {timeout:.0f} s")
        time.sleep(0.05)


Judge = Callable[[World, str], tuple[bool, list[str]]]  # (the stand-in's world, the task's goal) -> success, unmet


def run_graph_suite(tasks: Sequence[Task], config: GraphSuiteConfig, stream: TextIO | None = None,
                    on_episode: Callable[[GraphEpisode], None] | None = None,
                    domain_id: int | None = None, judge: Judge = judge_on_world) -> list[GraphEpisode]:
    """Every task through one graph, in order; a progress line per task on `stream`. Each is judged
    by `judge` on the stand-in's world once the planner has answered."""
    from conceptagent_ros.ros.domains import reserved_domain

    stream = stream or sys.stderr
    if not tasks:
        raise ConceptAgentError("no tasks to run")
    camera = config.perception == "camera"
    episodes: list[GraphEpisode] = []
    with tempfile.TemporaryDirectory() as folder, reserved_domain() as reserved:
        context = init_context(domain_id if domain_id is not None else reserved)
        options = GraphOptions(robot={"scene": tasks[0].scene, "perception": config.perception},
                               planner={"planner": config.planner, "llm": config.llm},
                               perception=_perception_parameters(config, tasks, Path(folder)) if camera else None)
        stream.write(f"Bringing up the graph ({', '.join(options_nodes(options))}) "
                     f"on ROS_DOMAIN_ID={domain_id if domain_id is not None else reserved}\n")
        graph = bring_up(options, context=context)
        graph.owns_context = True
        operator = _Operator(graph, NAMESPACE)
        start = time.perf_counter()
        try:
            for i, task in enumerate(tasks, 1):
                episode = _run_one(graph, operator, task, config, camera, judge)
                episodes.append(episode)
                if on_episode is not None:
                    on_episode(episode)
                passed = sum(e.success for e in episodes)
                elapsed = time.perf_counter() - start
                eta = elapsed / i * (len(tasks) - i)
                mark = "ok  " if episode.success else "FAIL"
                why = (f"  {episode.error or 'unmet ' + ', '.join(episode.unmet)}\n      ran: "
                       f"{'; '.join(episode.executed) or 'nothing'}" if not episode.success else "")
                stream.write(f"[{i:>3}/{len(tasks)}] {mark} {task.id:<12} {task.scene:<16} steps {episode.steps:>3} "
                             f"{episode.seconds:6.1f}s  ({passed}/{i} so far, eta {eta:5.0f}s){why}\n")
                stream.flush()
        finally:
            operator.close()
            graph.shutdown()
    return episodes


def _run_one(graph: RosGraph, operator: _Operator, task: Task, config: GraphSuiteConfig, camera: bool,
             judge: Judge) -> GraphEpisode:
    robot: Any = graph.nodes["robot"]  # RobotStandInNode: its world is the judge's truth
    failures = [f"{skill}={rate}" for skill, rate in sorted(task.failures.items())] or [""]
    robot.set_parameters([Parameter("scene", value=task.scene), Parameter("failure_rates", value=failures)])
    perception: Any = graph.nodes.get("perception")
    scene_graph = graph.nodes.get("scene_graph")
    frames_before = 0
    try:
        if camera:
            operator.call(operator.perception_reset, "clearing the perception map")
            frames_before = perception.frames if perception is not None else 0
        if scene_graph is not None:
            scene_graph.set_parameters([Parameter("map", value=task.scene)])
            operator.call(operator.scene_graph_reset, "clearing the scene graph node")
        operator.call(operator.robot_reset, f"resetting the stand-in to {task.scene}")
        if camera:
            _wait_for_the_first_look(robot, LOOK_TIMEOUT_S)
        reply = send_task(operator.node, task.instruction, goal=task.goal, planner=config.planner,
                          max_steps=task.max_steps or config.max_steps, timeout=config.timeout)
    except (ConceptAgentError, TaskClientError) as e:
        return GraphEpisode(task.id, task.scene, task.instruction, False, False, 0, 0.0, error=str(e))
    frames = (perception.frames - frames_before) if perception is not None else 0
    success, unmet = judge(robot.world, task.goal)
    if not reply.accepted or reply.result is None:
        return GraphEpisode(task.id, task.scene, task.instruction, success, False, 0, reply.seconds,
                            unmet, "the planner rejected the task", frames)
    result = reply.result
    return GraphEpisode(task.id, task.scene, task.instruction, success, bool(result.success), int(result.steps),
                        reply.seconds, unmet, "" if success else result.error_msg, frames, list(robot.executed))


def summary_markdown(episodes: Sequence[GraphEpisode], config: GraphSuiteConfig, suite: str,
                     body: str = "") -> str:
    """The suite's table; `body`: what played the robot, where not the stand-in (it saw and was judged)."""
    physical = [e for e in episodes if not e.symbolic_goal]
    passed = sum(e.success for e in physical)
    seeing = (f"the perception node ({config.detector} detector) fusing the stand-in's camera"
              if config.perception == "camera" else "the stand-in's ground-truth scene graph")
    if config.perception == "camera":
        seeing += (", with scene_graph built by the scene graph node from perceived_graph, the robot's pose and "
                   "the skills' outcomes, as on a real robot")
    judged = "the stand-in's world"
    if body:
        seeing, judged = body, "PyBullet's state"
    lines = [f"# The {suite} suite through the ROS graph", "",
             f"Planner node `{config.planner}` with `{config.llm}`, seeing {seeing}; each task sent as an "
             f"ExecuteTask goal and judged on {judged} (`conceptagent ros suite`).", "",
             f"**{passed}/{len(physical)} tasks succeeded.**" + (
                 f" Left out of that figure: {', '.join(e.task_id for e in episodes if e.symbolic_goal)}, whose goal "
                 "the body judges on its own flags (a symbolic effect), not on physics." if len(physical) < len(episodes)
                 else ""), "",
             "| task | scene | success | planner said | steps | seconds | frames | unmet / error |",
             "|---|---|---|---|---:|---:|---:|---|"]
    for e in episodes:
        why = e.error or ", ".join(e.unmet)
        lines.append(f"| {e.task_id} | {e.scene} | {'yes' if e.success else 'no'} | "
                     f"{'success' if e.believed_success else 'failure'} | {e.steps} | {e.seconds:.1f} | {e.frames} | "
                     f"{why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def write_results(episodes: Sequence[GraphEpisode], config: GraphSuiteConfig, suite: str, out: Path,
                  body: str = "") -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    stem = f"ros_suite_{suite}_{'pybullet' if body else config.perception}"
    md, table = out / f"{stem}.md", out / f"{stem}.csv"
    write_atomic(md, summary_markdown(episodes, config, suite, body))
    rows = [asdict(e) | {"unmet": "; ".join(e.unmet), "executed": "; ".join(e.executed),
                         "symbolic_goal": " ".join(e.symbolic_goal)} for e in episodes]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]) if rows else ["task_id"])
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(table, text.getvalue())
    return [md, table]
