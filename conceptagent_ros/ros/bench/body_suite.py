"""A task suite through the ROS graph on the physical body: `conceptagent ros suite --body pybullet`.

Per task, what `conceptagent ros up --scene S --body pybullet` brings up, on a DDS domain of the
suite's own: the planner node and the manipulation node with conceptagent_mm in the task's exported
world as the whole robot (it serves `skills/<skill>` for every skill and publishes the scene graph
its mast camera sees). The task goes to the planner as an ExecuteTask goal from a client node, as a
user's tools would send it; the graph is taken down after it, so every task starts from its scene as
the scene file has it. Success is judged afterwards on PyBullet's state (household/judge.py), with
the task's goal, not on what the planner believed.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.episode import embedded_task_map
from conceptagent_ros.evaluation.tasks import Task
from conceptagent_ros.household.judge import physical_household_state
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.ros.bench.graph_suite import GraphEpisode, GraphSuiteConfig
from conceptagent_ros.ros.bringup import NAMESPACE, GraphOptions, body_options, bring_up, init_context
from conceptagent_ros.ros.client_node import ClientNode
from conceptagent_ros.ros.task_client import TaskClientError, send_task
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.scene.symbolic import load_predicates
from conceptagent_ros.sim.world import World

SEEING = "conceptagent_mm's own mast camera (the manipulation node's scene graph), in PyBullet"
FIRST_GRAPH_S = 1.0  # the body's first scene graph reaches the planner (it looked around on start)


def judge_on_body(body: Any, task: Task) -> tuple[bool, list[str]]:
    """The task's goal over the scene's ids, on the body's simulator state."""
    world = World(load_scene(task.scene))
    task_map = embedded_task_map(world)
    domain = cached_domain(load_predicates(), world.skills, task_map.domain_types())
    goal = Goal.parse(domain, task.goal, task_map.goal_types())
    state = physical_household_state(body.p, body.client, body.base.bodies, body.robot, body.scene, body.flags)
    return goal.holds(state), goal.unmet(state)


def run_body_suite(tasks: Sequence[Task], config: GraphSuiteConfig, stream: TextIO | None = None,
                   domain_id: int | None = None) -> list[GraphEpisode]:
    """Every task on a graph of its own, in order; a progress line per task on `stream`."""
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
        stream.write(f"A graph per task (planner, manipulation node with the body) on ROS_DOMAIN_ID={domain}\n")
        operator = ClientNode("suite_operator", NAMESPACE, context=context)
        start = time.perf_counter()
        try:
            for i, task in enumerate(tasks, 1):
                episode = _run_one(context, operator, task, config)
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


def _run_one(context: Any, operator: ClientNode, task: Task, config: GraphSuiteConfig) -> GraphEpisode:
    options = GraphOptions(namespace=NAMESPACE, planner={"planner": config.planner, "llm": config.llm},
                           robot={"scene": task.scene}, with_robot=False, manipulation=body_options(task.scene))
    graph = bring_up(options, context=context)
    try:
        body = graph.nodes["manipulation"].body
        time.sleep(FIRST_GRAPH_S)
        try:
            reply = send_task(operator.node, task.instruction, goal=task.goal, planner=config.planner,
                              max_steps=task.max_steps or config.max_steps, timeout=config.timeout)
        except TaskClientError as e:
            success, unmet = judge_on_body(body, task)
            return GraphEpisode(task.id, task.scene, task.instruction, success, False, 0, 0.0, unmet, str(e))
        success, unmet = judge_on_body(body, task)
        if not reply.accepted or reply.result is None:
            return GraphEpisode(task.id, task.scene, task.instruction, success, False, 0, reply.seconds, unmet,
                                "the planner rejected the task")
        result = reply.result
        return GraphEpisode(task.id, task.scene, task.instruction, success, bool(result.success), int(result.steps),
                            reply.seconds, unmet, "" if success else result.error_msg)
    finally:
        graph.shutdown()
