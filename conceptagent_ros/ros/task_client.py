"""Client side of the planner's API: send an ExecuteTask goal and follow it, publish a text command.
Used by `conceptagent ros send|demo|bench` and `conceptagent say`."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rclpy.node import Node
from std_msgs.msg import String

from conceptagent_ros.action import ExecuteTask
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import PlanStep
from conceptagent_ros.ros.action_client import ActionClient

SERVER_GONE_S = 5.0


class TaskClientError(ConceptAgentError):
    """The planner node could not be reached, or did not accept the task."""


@dataclass
class TaskReply:
    accepted: bool
    result: ExecuteTask.Result | None
    status: int
    steps: list[PlanStep] = field(default_factory=list)
    seconds: float = 0.0


DISCOVERY_SETTLE_S = 0.5  # after a planner is first discovered, before the first goal goes to it


class TaskSender:
    """An ExecuteTask client kept for many tasks, as an operator's console keeps one: its endpoints are
    discovered once, not again per task (on a lossy link every new endpoint is discovery traffic that
    can be lost)."""

    def __init__(self, node: Node, action: str = "execute_task"):
        self.client = ActionClient(node, ExecuteTask, action)

    def send(self, instruction: str, goal: str = "", planner: str = "", max_steps: int = 0,
             on_step: Callable[[PlanStep], None] | None = None, server_wait: float = 10.0,
             timeout: float = 600.0) -> TaskReply:
        """Send one task to a planner node spun by someone else's executor; blocks until it ends."""
        client = self.client
        known = client.server_is_ready()
        if not client.wait_for_server(timeout_sec=server_wait):
            raise TaskClientError(f"no planner serves {client._action_name} (waited {server_wait:.0f} s); "
                                  "start it with `conceptagent ros up` or ros2 launch")
        if not known:
            # Seen the server's endpoints is not the server having seen ours: a goal request sent in
            # between is lost for good (a volatile reader that matches later never gets it). Seen
            # once under a loaded `make test`: a demo's first goal unanswered for 30 s.
            time.sleep(DISCOVERY_SETTLE_S)
        steps: list[PlanStep] = []

        def feedback(msg) -> None:  # noqa: ANN001 - ExecuteTask feedback message
            steps.append(msg.feedback.last_step)
            if on_step is not None:
                on_step(msg.feedback.last_step)

        started = time.perf_counter()
        goal_msg = ExecuteTask.Goal(instruction=instruction, goal=goal, planner=planner, max_steps=max_steps)
        # Accepted once the planner answers, or once its feedback or status names the goal; a goal
        # the planner does not know after a while is sent again (ros/action_client.py)
        answer = client.send_goal_reliably(goal_msg, feedback, timeout=server_wait)
        if answer.why == "timeout":
            raise TaskClientError(f"the planner did not answer the goal request in {server_wait:.0f} s")
        if answer.handle is None:
            return TaskReply(False, None, 0, steps, time.perf_counter() - started)
        handle = answer.handle
        ended = client.get_result_reliably(handle, timeout=timeout, gone_after=SERVER_GONE_S)
        if ended.why == "timeout":
            handle.cancel_goal_async()
            raise TaskClientError(f"the task did not end within {timeout:.0f} s; it was canceled")
        if ended.why == "gone":
            # A planner that stopped (Ctrl-C, a crash) never answers: say so instead of waiting out the timeout
            raise TaskClientError(f"the planner went away while running the task (its {client._action_name} "
                                  f"server has been gone for {SERVER_GONE_S:.0f} s); the task's outcome is unknown")
        if ended.why == "lost":
            raise TaskClientError("the planner no longer knows the task (it restarted while running it); "
                                  "the task's outcome is unknown")
        response = ended.response
        return TaskReply(True, response.result, response.status, steps, time.perf_counter() - started)

    def close(self) -> None:
        self.client.destroy()


def send_task(node: Node, instruction: str, goal: str = "", planner: str = "", max_steps: int = 0,
              action: str = "execute_task", on_step: Callable[[PlanStep], None] | None = None,
              server_wait: float = 10.0, timeout: float = 600.0) -> TaskReply:
    """One task through a client made for it (see TaskSender to send many)."""
    sender = TaskSender(node, action)
    try:
        return sender.send(instruction, goal, planner, max_steps, on_step, server_wait, timeout)
    finally:
        sender.close()


def publish_command(node: Node, text: str, topic: str = "command", wait: float = 3.0) -> int:
    """Publish one text command once a subscriber is there; returns how many subscribers got it."""
    publisher = node.create_publisher(String, topic, 10)
    deadline = time.monotonic() + wait
    while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    count = publisher.get_subscription_count()
    publisher.publish(String(data=text))
    time.sleep(0.2)  # let DDS deliver before the node goes away
    node.destroy_publisher(publisher)
    return count
