"""The core's RobotInterface over ROS: skills through action clients, observations from the scene
graph topic or service.

It lives on a node of its own (`<planner>_link`, same namespace and context as the planner) spun by
a single-threaded executor on its own thread: the agent loop blocks in execute() and observe() on
the planner's task thread, never inside an executor, so the link's executor only ever runs short
callbacks, and rclpy's single-threaded executor answers them with the least latency.

Freshness: a skill's result carries `finished`, the time it ended on the robot's clock. After a
skill, observe() takes the first scene graph stamped at or after it (topic mode), so a frame taken
before the gripper closed never passes for the world after the grasp. A task's first observation
is likewise stamped at or after the task began (begin_task): a graph published before it -- of the
world before a reset, or of where the robot stood at the end of the last task -- is not the world
the task starts in. Service mode asks the graph service instead (one more round trip per step).

Every wait is bounded and every failure comes back as a SkillOutcome the planner can reason about:
a server that is not running, a goal it rejects, a result that does not come in time, a server
that restarted while its skill ran (it no longer knows the goal), a cancel.
Only a scene graph that never arrives raises (RobotLinkError): without observations there is
nothing to plan on.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.ros.action_client import ActionClient
from conceptagent_ros.ros.client_node import ClientNode
from conceptagent_ros.ros.conversions.scene import GraphSnapshot, graph_from_msg, stamp_ns
from conceptagent_ros.ros.conversions.skills import call_to_msg, outcome_from_result
from conceptagent_ros.ros.futures import wait_done
from conceptagent_ros.scene.model import RobotState
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome
from conceptagent_ros.srv import GetSceneGraph

EXECUTE_SKILL_TYPE = "conceptagent_ros/action/ExecuteSkill"
ACTION_TYPES: dict[str, Any] = {EXECUTE_SKILL_TYPE: ExecuteSkill}
CANCEL_GRACE_SECONDS = 0.5  # for the robot to acknowledge a cancel request
UNLISTED_SERVER_GRACE_SECONDS = 2.0  # a goal still sent to a server the graph does not list


class RobotLinkError(ConceptAgentError):
    """The robot side does not answer: no scene graph arrives."""


@dataclass(frozen=True)
class SkillEndpoint:
    skill: str
    action: str  # action name, resolved in the node's namespace unless absolute
    type: str = EXECUTE_SKILL_TYPE


@dataclass(frozen=True)
class RobotLinkConfig:
    observation: str = "topic"  # topic | service
    graph_service: str = "get_scene_graph"
    graph_topic: str = "scene_graph"
    server_wait: float = 5.0  # seconds to wait for a skill server to appear and accept a goal
    skill_timeout: float = 120.0  # seconds a skill may run before it is canceled
    graph_timeout: float = 5.0  # seconds to wait for a scene graph


class RosRobot:
    """RobotInterface for the agent, living on a node the caller spins with a multi-threaded executor."""

    def __init__(self, owner: Node, endpoints: Mapping[str, SkillEndpoint], config: RobotLinkConfig = RobotLinkConfig()):
        unknown = sorted({e.type for e in endpoints.values()} - set(ACTION_TYPES))
        if unknown:
            raise ConceptAgentError(f"unsupported skill action types {unknown}; supported: {sorted(ACTION_TYPES)}")
        if config.observation not in ("service", "topic"):
            raise ConceptAgentError(f"observation source {config.observation!r}: use topic or service")
        # Its own node and executor thread in the owner's context: entities made below are picked up
        # by the spinning executor as they are created
        self.link = ClientNode(f"{owner.get_name()}_link", owner.get_namespace(), context=owner.context)
        node = self.node = self.link.node
        self.config = config
        self.endpoints = dict(endpoints)
        # Created up front, so DDS discovery of every skill server happens at start-up, not in the
        # middle of a task (where, on a loaded machine, it can outlast server_wait).
        self.clients: dict[str, ActionClient] = {
            name: ActionClient(node, ACTION_TYPES[e.type], e.action) for name, e in self.endpoints.items()}
        self.cancel = threading.Event()
        self._closed = threading.Event()
        self.last_robot: RobotState | None = None  # as last observed, for markers
        self._latest: SceneGraph | None = None
        self._graph_arrived = threading.Condition()
        self._fresh_from_ns = 0  # robot-clock time the next observation must not predate
        if config.observation == "service":
            self.graph_client = node.create_client(GetSceneGraph, config.graph_service)
        else:
            qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
            node.create_subscription(SceneGraph, config.graph_topic, self._on_graph, qos)

    # -- observations ------------------------------------------------------------------------------
    def _on_graph(self, msg: SceneGraph) -> None:
        with self._graph_arrived:
            self._latest = msg
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
        if not wait_done(future, self.config.graph_timeout) or future.result() is None:
            raise RobotLinkError(f"{name} did not answer within {self.config.graph_timeout:.1f} s")
        return future.result().graph

    def _graph_from_topic(self) -> SceneGraph:
        deadline = time.monotonic() + self.config.graph_timeout
        with self._graph_arrived:
            while self._latest is None or stamp_ns(self._latest.header.stamp) < self._fresh_from_ns:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RobotLinkError(f"no scene graph on {self.config.graph_topic} newer than the last skill "
                                         f"within {self.config.graph_timeout:.1f} s; is the robot side publishing?")
                self._graph_arrived.wait(left)
            return self._latest

    def observe(self) -> Observation:
        return self.snapshot().observation

    def begin_task(self) -> None:
        """A task starts now: the next observation is a scene graph stamped no earlier (topic mode)."""
        self._fresh_from_ns = max(self._fresh_from_ns, self.node.get_clock().now().nanoseconds)

    # -- skills ------------------------------------------------------------------------------------
    def execute(self, call: SkillCall) -> SkillOutcome:
        try:
            return self._execute(call)
        except Exception:
            # Shutting down under a running skill: the clients (or the whole context) may be gone
            # under this thread. That is a cancel, not a crash; anything else is still raised.
            if self.cancel.is_set() or self._closed.is_set():
                return SkillOutcome(call, False, f"{call} canceled: the planner is shutting down", "canceled")
            raise

    def _execute(self, call: SkillCall) -> SkillOutcome:
        endpoint = self.endpoints.get(call.skill)
        if endpoint is None:
            return SkillOutcome(call, False, f"{call} not executed: no action server is configured for skill "
                                             f"'{call.skill}'", "unavailable")
        client = self.clients[call.skill]
        # The graph's readiness is a hint, not the verdict: under load Fast DDS's graph cache can say a
        # server that has been answering all along is gone (its request-reader and response-writer
        # counts briefly disagree). So a server the graph does not show still gets the goal, with a
        # short grace; "not running" means it neither showed up nor accepted.
        ready = client.wait_for_server(timeout_sec=self.config.server_wait)
        goal = ExecuteSkill.Goal(call=call_to_msg(call))
        accept_wait = self.config.server_wait if ready else min(self.config.server_wait, UNLISTED_SERVER_GRACE_SECONDS)
        # Accepted on the server's answer, or on the goal's status or feedback; a goal the server does
        # not know after a while is sent again (ros/action_client.py). Given up on, it is canceled.
        answer = client.send_goal_reliably(goal, timeout=accept_wait, cancel=self.cancel)
        if answer.why == "canceled":
            return SkillOutcome(call, False, f"{call} canceled before it started", "canceled")
        if answer.why == "timeout":
            if not ready:
                return SkillOutcome(call, False, f"{call} not executed: the skill server {endpoint.action} is not "
                                                 f"running (waited {self.config.server_wait:.1f} s)", "unavailable")
            return SkillOutcome(call, False, f"{call}: {endpoint.action} did not accept the goal in time", "timeout")
        if answer.handle is None:
            return SkillOutcome(call, False, f"{call}: {endpoint.action} rejected the goal", "unavailable")
        handle = answer.handle
        # A server that restarted answers a probe that it no longer knows the goal ("lost"), instead of
        # the planner waiting out the skill timeout for a goal that died with the old one
        ended = client.get_result_reliably(handle, timeout=self.config.skill_timeout, cancel=self.cancel)
        if ended.response is not None:
            result = ended.response.result
            self._fresh_from_ns = max(self._fresh_from_ns, stamp_ns(result.finished))
            return outcome_from_result(call, result)
        if ended.why == "lost":
            return SkillOutcome(call, False, f"{call}: the skill server {endpoint.action} no longer knows the goal "
                                             "(it restarted while the skill ran); the skill's effect is unknown",
                                "unavailable")
        # Canceled by the task, or over time: ask the robot to stop the skill, and say which. The
        # skill server finishes the goal on its own; the task does not wait for that.
        wait_done(handle.cancel_goal_async(), CANCEL_GRACE_SECONDS)
        if ended.why == "canceled":
            return SkillOutcome(call, False, f"{call} canceled while running", "canceled")
        return SkillOutcome(call, False, f"{call} did not finish within {self.config.skill_timeout:.0f} s and was "
                                         "canceled", "timeout")

    def destroy(self) -> None:
        self._closed.set()
        self.link.stop_spinning()
        for client in self.clients.values():
            client.destroy()
        self.node.destroy_node()

