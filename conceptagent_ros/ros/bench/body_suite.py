"""A task suite through the ROS graph on the physical body: `conceptagent ros suite --body pybullet`.

Per task, what `conceptagent ros up --scene S --body pybullet` brings up, on a DDS domain of the
suite's own: the planner node, the manipulation node with conceptagent_mm in the task's exported
world as the whole robot (it serves `skills/<skill>` for every skill), and -- perception camera, the
default -- the perception node fusing the body's mast camera images (oracle detector) and the scene
graph node building the planner's graph from them, the base's pose and the skills' outcomes, as on
a real robot; with perception body the manipulation node publishes the body's own view instead.
The task goes to the planner as an ExecuteTask goal from a client node, as a user's tools would
send it, once the body's first look around is through; the graph is taken down after it, so every
task starts from its scene as the scene file has it. Success is judged afterwards on PyBullet's
state (bodies/household/judge.py), with the task's goal, not on what the planner believed.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.episode import embedded_task_map
from conceptagent_ros.evaluation.tasks import Task
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.ros.bench.graph_suite import GraphEpisode, GraphSuiteConfig
from conceptagent_ros.ros.bringup import NAMESPACE, GraphOptions, body_options, bring_up, init_context
from conceptagent_ros.ros.client_node import ClientNode
from conceptagent_ros.ros.task_client import TaskClientError, send_task
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.scene.symbolic import load_predicates
from conceptagent_ros.sim.world import World

SEEING = {"camera": "the perception node (oracle detector) fusing conceptagent_mm's mast camera in PyBullet, with "
                     "scene_graph built by the scene graph node from perceived_graph, the base's pose and the skills' "
                     "outcomes",
          "body": "conceptagent_mm's own mast camera (the manipulation node's scene graph), in PyBullet"}
FIRST_LOOK_TIMEOUT_S = 120.0
FIRST_GRAPH_S = 0.5  # the first scene graph after the first look reaches the planner


def judge_on_body(body: Any, task: Task) -> tuple[bool, list[str], list[str]]:
    """The task's goal over the scene's ids, on the body's simulator state: whether it holds, what of
    it is unmet, and the goal's predicates the body judges on its own flags, not on physics."""
    world = World(load_scene(task.scene))
    task_map = embedded_task_map(world)
    domain = cached_domain(load_predicates(), world.skills, task_map.domain_types())
    goal = Goal.parse(domain, task.goal, task_map.goal_types())
    state = body.judged_state()
    return goal.holds(state), goal.unmet(state), sorted(goal.predicates & body.symbolic_predicates)


def run_body_suite(tasks: Sequence[Task], config: GraphSuiteConfig, stream: TextIO | None = None,
                   domain_id: int | None = None, perception: str = "camera",
                   sensing: str | None = None) -> list[GraphEpisode]:
    """Every task on a graph of its own, in order; a progress line per task on `stream`. `sensing`:
    the body's senses (None: its own; bodies/sensing.body_sensing)."""
    from conceptagent_ros.ros.domains import reserved_domain

    stream = stream or sys.stderr
    if not tasks:
        raise ConceptAgentError("no tasks to run")
    not_household = sorted({t.scene for t in tasks if load_scene(t.scene).setting != "household"})
    if not_household:
        raise ConceptAgentError(f"--body pybullet runs household scenes; {', '.join(not_household)} is not one "
                                "(the tabletop's tasks run with bench --body pybullet)")
    episodes: list[GraphEpisode] = []
    with reserved_domain() as reserved:
        domain = domain_id if domain_id is not None else reserved
        context = init_context(domain)
        nodes = "planner, manipulation node with the body" + (", perception, scene graph" if perception == "camera" else "")
        stream.write(f"A graph per task ({nodes}) on ROS_DOMAIN_ID={domain}\n")
        operator = ClientNode("suite_operator", NAMESPACE, context=context)
        start = time.perf_counter()
        try:
            for i, task in enumerate(tasks, 1):
                episode = _run_one(context, operator, task, config, perception, sensing)
                episodes.append(episode)
                passed = sum(e.success for e in episodes)
                elapsed = time.perf_counter() - start
                eta = elapsed / i * (len(tasks) - i)
                mark = "ok  " if episode.success else "FAIL"
                why = f"  {episode.error or 'unmet ' + ', '.join(episode.unmet)}" if not episode.success else ""
                stream.write(f"[{i:>3}/{len(tasks)}] {mark} {task.id:<12} {task.scene:<16} steps {episode.steps:>3} "
                             f"{episode.seconds:6.1f}s  ({passed}/{i} so far, eta {eta:5.0f}s){why}\n")
                stream.flush()
        finally:
            operator.close()
            import rclpy

            rclpy.try_shutdown(context=context)
    return episodes


def _run_one(context: Any, operator: ClientNode, task: Task, config: GraphSuiteConfig, perception: str,
             sensing: str | None) -> GraphEpisode:
    options = GraphOptions(namespace=NAMESPACE, planner={"planner": config.planner, "llm": config.llm},
                           robot={"scene": task.scene}, with_robot=False,
                           manipulation=body_options(task.scene, perception, sensing))
    graph = bring_up(options, context=context)
    try:
        node: Any = graph.nodes["manipulation"]
        body = node.body
        deadline = time.monotonic() + FIRST_LOOK_TIMEOUT_S
        while not node.looked:
            if time.monotonic() > deadline:
                success, unmet, flagged = judge_on_body(body, task)
                return GraphEpisode(task.id, task.scene, task.instruction, success, False, 0, 0.0, unmet,
                                    f"the body's first look did not reach perception within {FIRST_LOOK_TIMEOUT_S:.0f} s",
                                    symbolic_goal=flagged)
            time.sleep(0.05)
        time.sleep(FIRST_GRAPH_S)
        frames_before = node.camera.frames if node.camera is not None else 0

        def frames() -> int:
            return node.camera.frames - frames_before if node.camera is not None else 0

        try:
            reply = send_task(operator.node, task.instruction, goal=task.goal, planner=config.planner,
                              max_steps=task.max_steps or config.max_steps, timeout=config.timeout)
        except TaskClientError as e:
            success, unmet, flagged = judge_on_body(body, task)
            return GraphEpisode(task.id, task.scene, task.instruction, success, False, 0, 0.0, unmet, str(e), frames(),
                                symbolic_goal=flagged)
        success, unmet, flagged = judge_on_body(body, task)
        if not reply.accepted or reply.result is None:
            return GraphEpisode(task.id, task.scene, task.instruction, success, False, 0, reply.seconds, unmet,
                                "the planner rejected the task", frames(), symbolic_goal=flagged)
        result = reply.result
        return GraphEpisode(task.id, task.scene, task.instruction, success, bool(result.success), int(result.steps),
                            reply.seconds, unmet, "" if success else result.error_msg, frames(), symbolic_goal=flagged)
    finally:
        graph.shutdown()
