"""Hostile traffic from another process: text commands on the topic and ExecuteTask goals with
arbitrary instructions (control characters, very long, unicode, empty, PDDL-looking) and arbitrary
goal strings. The planner node answers each -- a goal with success or a clear rejection, a command
with a terminal task status and its reason -- and keeps serving: a real task succeeds afterwards.

The graph is `conceptagent ros up` in a child process; this process talks to it with rclpy (and the
project's lock-fixed ActionClient, see conceptagent_ros/ros/action_client.py).
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ros_helpers import Spinning, interrupt, require_ros, shut_down, wait_future

require_ros()

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from conceptagent_ros.action import ExecuteTask  # noqa: E402
from conceptagent_ros.msg import TaskStatus  # noqa: E402
from conceptagent_ros.ros.action_client import ActionClient  # noqa: E402  (rclpy's, with ros2/rclpy#1308's lock)

NS = "conceptagent"
TERMINAL = {TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.CANCELED, TaskStatus.REJECTED, TaskStatus.PREEMPTED}
CLEAR_REJECTIONS = {ExecuteTask.Result.INVALID_INSTRUCTION, ExecuteTask.Result.GOAL_NOT_REACHED,
                    ExecuteTask.Result.PLANNER_ERROR}

# Text a ROS string can carry (no lone surrogates: they cannot be encoded as UTF-8 on this side)
ros_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=400)
pddl_looking = st.sampled_from(["(and (in apple_1 fridge_1))", "(:goal (and", "))))((((", "(not (not (not",
                                "(forall (?x) (in ?x fridge_1))", "(in apple_1 fridge_1", "(holding)", "()",
                                "(define (problem p) (:domain d))", "(exists (?o - object) (open ?o))"])
instructions = st.one_of(ros_text, pddl_looking, st.builds(lambda s, n: s * n, ros_text, st.integers(1, 300)))
goals = st.one_of(st.just(""), ros_text, pddl_looking)
planners = st.one_of(st.just(""), ros_text,
                     st.sampled_from(["mcts", "mcts:iterations=-1", "mcts:iterations=1e99", "react:foo=bar",
                                      "tree-planner:samples=1000000000", "llm-planner:examples=-3", "unknown-planner",
                                      "grounded-decoding:beam=0", "../../etc/passwd", "react:", ":::"]))
max_steps = st.one_of(st.just(0), st.integers(1, 5), st.just(2**32 - 1))


class Operator:
    """A client process's view of the planner: the action, the command topic, the status topic."""

    def __init__(self, domain: int):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(f"hostile_{uuid.uuid4().hex[:8]}", namespace=NS, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.spinning = Spinning(self.executor, "hostile-client-spin")
        self.tasks = ActionClient(self.node, ExecuteTask, "execute_task")
        self.commands = self.node.create_publisher(String, "command", 10)
        self.statuses: list[TaskStatus] = []
        self.arrived = threading.Condition()
        latched = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.node.create_subscription(TaskStatus, "task_status", self._on_status, latched)

    def _on_status(self, msg: TaskStatus) -> None:
        with self.arrived:
            self.statuses.append(msg)
            self.arrived.notify_all()

    def send_goal(self, instruction: str, goal: str, planner: str = "", max_steps: int = 0,
                  timeout: float = 60.0) -> tuple[bool, ExecuteTask.Result | None]:
        request = ExecuteTask.Goal(instruction=instruction, goal=goal, planner=planner, max_steps=max_steps)
        sent = wait_future(self.tasks.send_goal_async(request), 15.0)
        if not sent.accepted:
            return False, None
        return True, wait_future(sent.get_result_async(), timeout).result

    def say(self, text: str, timeout: float = 60.0) -> TaskStatus:
        """Publish a command; the terminal status of the task it started (or of its rejection)."""
        with self.arrived:
            seen = len(self.statuses)
        self.commands.publish(String(data=text))
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                for status in self.statuses[seen:]:
                    if status.task_id.startswith("cmd-") and status.state in TERMINAL:
                        return status
                left = deadline - time.monotonic()
                assert left > 0, f"no terminal status for the command {text[:80]!r} within {timeout} s"
                self.arrived.wait(left)

    def close(self) -> None:
        self.spinning.stop(timeout=2.0)
        self.tasks.destroy()
        self.node.destroy_node()
        shut_down(self.context)


@pytest.fixture(scope="module")
def operator() -> Iterator[Operator]:
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as reserved:
        env = dict(os.environ, ROS_DOMAIN_ID=str(reserved), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        graph = subprocess.Popen([sys.executable, "-m", "conceptagent_ros.cli", "ros", "up"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        client = Operator(reserved)
        try:
            assert client.tasks.wait_for_server(timeout_sec=60.0), "the planner's execute_task never appeared"
            deadline = time.monotonic() + 30.0
            while client.commands.get_subscription_count() == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            yield client
            assert graph.poll() is None, "the graph process died under the traffic"
        finally:
            client.close()
            out, _ended = interrupt(graph, 15)
            assert "Traceback" not in out, out[-3000:]


def _answered_clearly(accepted: bool, result: ExecuteTask.Result | None) -> bool:
    if not accepted or result is None:
        return False  # nothing runs here between goals: a rejection at the door would be wrong
    if result.success:
        return True
    return result.error_code in CLEAR_REJECTIONS and bool(result.error_msg.strip())


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(instruction=instructions, goal=goals, planner=planners, steps=max_steps)
@example(instruction="", goal="", planner="", steps=0)
@example(instruction="\x1b[2J\x07\t\r\n", goal="", planner="", steps=0)
@example(instruction="x" * 200_000, goal="", planner="", steps=0)
@example(instruction="put the apple in the fridge", goal="(and (in apple_1 fridge_1", planner="", steps=0)
@example(instruction="ponga la manzana en la nevera 🍎", goal="(in ?x ?y)", planner="", steps=0)
@example(instruction="put the apple in the fridge", goal="(in apple_1 unicorn_9)", planner="", steps=0)
@example(instruction="put the apple in the fridge", goal="", planner="mcts:iterations=-1", steps=0)
@example(instruction="put the apple in the fridge", goal="", planner="\x00\x1b[31m", steps=2**32 - 1)
@example(instruction="put the apple in the fridge", goal="", planner="", steps=1)
def test_every_goal_is_answered_and_the_node_keeps_serving(operator: Operator, instruction: str, goal: str,
                                                           planner: str, steps: int) -> None:
    accepted, result = operator.send_goal(instruction, goal, planner, steps)
    assert _answered_clearly(accepted, result), (instruction[:200], goal[:200], planner[:200], steps, result)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(text=instructions)
@example(text="")
@example(text="\x00\x01\x02")
@example(text="y" * 100_000)
@example(text="(:goal (and (in apple_1 fridge_1)))")
def test_every_command_gets_a_terminal_status_with_its_reason(operator: Operator, text: str) -> None:
    status = operator.say(text)
    assert status.state in TERMINAL
    if status.state != TaskStatus.SUCCEEDED:
        assert status.message.strip(), status
    assert len(status.instruction) <= 200  # what is echoed back is bounded


@pytest.mark.slow
def test_a_real_task_succeeds_after_the_traffic(operator: Operator) -> None:
    accepted, result = operator.send_goal("put the apple in the fridge", "")
    assert accepted and result is not None and result.success, result
