"""The core's RobotInterface over ROS: skills through action clients, observations from the scene
graph service or topic. The planner node hands it its node (created late, py_trees_ros style).

Every wait is bounded and every failure comes back as a SkillOutcome the planner can reason about:
a server that is not running, a goal it rejects, a result that does not come in time, a cancel.
Only a scene graph that never arrives raises (RobotLinkError): without observations there is
nothing to plan on.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rclpy.action import ActionClient
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.ros.conversions.scene import GraphSnapshot, graph_from_msg
from conceptagent_ros.ros.conversions.skills import call_to_msg, outcome_from_result
from conceptagent_ros.scene.model import RobotState
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome
from conceptagent_ros.srv import GetSceneGraph

EXECUTE_SKILL_TYPE = "conceptagent_ros/action/ExecuteSkill"
ACTION_TYPES: dict[str, Any] = {EXECUTE_SKILL_TYPE: ExecuteSkill}
POLL_SECONDS = 0.01
CANCEL_GRACE_SECONDS = 1.0


class RobotLinkError(ConceptAgentError):
    """The robot side does not answer: no scene graph arrives."""


@dataclass(frozen=True)
class SkillEndpoint:
    skill: str
    action: str  # action name, resolved in the node's namespace unless absolute
    type: str = EXECUTE_SKILL_TYPE


@dataclass(frozen=True)
class RobotLinkConfig:
    observation: str = "service"  # service | topic
    graph_service: str = "get_scene_graph"
    graph_topic: str = "scene_graph"
    server_wait: float = 2.0  # seconds to wait for a skill server to appear
    skill_timeout: float = 120.0  # seconds a skill may run before it is canceled
    graph_timeout: float = 5.0  # seconds to wait for a scene graph


def _wait(future: Any, timeout: float, cancel: threading.Event | None = None) -> bool:
    """True when the future is done within the timeout; False on timeout or cancel."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    deadline = time.monotonic() + timeout
    while not done.wait(POLL_SECONDS):
        if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
            return future.done()
    return True


class RosRobot:
    """RobotInterface for the agent, living on a node the caller spins with a multi-threaded executor."""

    def __init__(self, node: Node, endpoints: Mapping[str, SkillEndpoint], group: CallbackGroup,
                 config: RobotLinkConfig = RobotLinkConfig()):
        unknown = sorted({e.type for e in endpoints.values()} - set(ACTION_TYPES))
        if unknown:
            raise ConceptAgentError(f"unsupported skill action types {unknown}; supported: {sorted(ACTION_TYPES)}")
        self.node = node
        self.config = config
        self.endpoints = dict(endpoints)
        # Created on a skill's first use: every client adds entities that rclpy's executor walks on
        # each wake-up, and a task uses few of the skills.
        self.group = group
        self.clients: dict[str, ActionClient] = {}
        self.cancel = threading.Event()
        self.last_robot: RobotState | None = None  # as last observed, for markers
        self._latest: tuple[float, SceneGraph] | None = None
        self._graph_arrived = threading.Condition()
        self._fresh_after = 0.0
        if config.observation == "service":
            self.graph_client = node.create_client(GetSceneGraph, config.graph_service, callback_group=group)
        elif config.observation == "topic":
            qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
            node.create_subscription(SceneGraph, config.graph_topic, self._on_graph, qos, callback_group=group)
        else:
            raise ConceptAgentError(f"observation source {config.observation!r}: use service or topic")

    # -- observations ------------------------------------------------------------------------------
    def _on_graph(self, msg: SceneGraph) -> None:
        with self._graph_arrived:
            self._latest = (time.monotonic(), msg)
            self._graph_arrived.notify_all()

    def snapshot(self) -> GraphSnapshot:
        msg = self._graph_from_service() if self.config.observation == "service" else self._graph_from_topic()
        snapshot = graph_from_msg(msg)
        self.last_robot = snapshot.observation.robot
        return snapshot

    def _graph_from_service(self) -> SceneGraph:
        name = self.graph_client.srv_name
        if not self.graph_client.wait_for_service(timeout_sec=self.config.graph_timeout):
            raise RobotLinkError(f"the scene graph service {name} is not available "
                                 f"(waited {self.config.graph_timeout:.1f} s); is the robot side running?")
        future = self.graph_client.call_async(GetSceneGraph.Request())
        if not _wait(future, self.config.graph_timeout) or future.result() is None:
            raise RobotLinkError(f"{name} did not answer within {self.config.graph_timeout:.1f} s")
        return future.result().graph

    def _graph_from_topic(self) -> SceneGraph:
        # After a skill, only a graph received after its result describes the world it left.
        deadline = time.monotonic() + self.config.graph_timeout
        with self._graph_arrived:
            while self._latest is None or self._latest[0] < self._fresh_after:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RobotLinkError(f"no fresh scene graph on {self.config.graph_topic} within "
                                         f"{self.config.graph_timeout:.1f} s; is the robot side publishing?")
                self._graph_arrived.wait(left)
            return self._latest[1]

    def observe(self) -> Observation:
        return self.snapshot().observation

    # -- skills ------------------------------------------------------------------------------------
    def execute(self, call: SkillCall) -> SkillOutcome:
        try:
            return self._execute(call)
        finally:
            self._fresh_after = time.monotonic()

    def _execute(self, call: SkillCall) -> SkillOutcome:
        endpoint = self.endpoints.get(call.skill)
        if endpoint is None:
            return SkillOutcome(call, False, f"{call} not executed: no action server is configured for skill "
                                             f"'{call.skill}'", "unavailable")
        client = self.clients.get(call.skill)
        if client is None:
            client = self.clients[call.skill] = ActionClient(self.node, ACTION_TYPES[endpoint.type], endpoint.action,
                                                             callback_group=self.group)
        if not client.wait_for_server(timeout_sec=self.config.server_wait):
            return SkillOutcome(call, False, f"{call} not executed: the skill server {endpoint.action} is not "
                                             f"running (waited {self.config.server_wait:.1f} s)", "unavailable")
        goal = ExecuteSkill.Goal(call=call_to_msg(call))
        sent = client.send_goal_async(goal)
        if not _wait(sent, self.config.server_wait, self.cancel):
            if self.cancel.is_set():
                return SkillOutcome(call, False, f"{call} canceled before it started", "canceled")
            return SkillOutcome(call, False, f"{call}: {endpoint.action} did not accept the goal in time", "timeout")
        handle = sent.result()
        if handle is None or not handle.accepted:
            return SkillOutcome(call, False, f"{call}: {endpoint.action} rejected the goal", "unavailable")
        result_future = handle.get_result_async()
        if _wait(result_future, self.config.skill_timeout, self.cancel):
            response = result_future.result()
            return outcome_from_result(call, response.result)
        # Canceled by the task, or over time: stop the skill on the robot, and say which.
        reason = "canceled" if self.cancel.is_set() else "timeout"
        stopped = handle.cancel_goal_async()
        _wait(stopped, CANCEL_GRACE_SECONDS)
        _wait(result_future, CANCEL_GRACE_SECONDS)
        if reason == "canceled":
            return SkillOutcome(call, False, f"{call} canceled while running", "canceled")
        return SkillOutcome(call, False, f"{call} did not finish within {self.config.skill_timeout:.0f} s and was "
                                         "canceled", "timeout")

    def destroy(self) -> None:
        for client in self.clients.values():
            client.destroy()
