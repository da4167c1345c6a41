"""Nav2's NavigateToPose through the project's action client, with nav2_simple_commander only to
wait until Nav2 is active.

Goals go to bt_navigator's `navigate_to_pose` action through ros/action_client.ActionClient on the
skill node's own executor, so a goal response or result lost on a lossy link is recovered as for
every other action of the project (BasicNavigator.goToPose uses rclpy's plain client, which waits
forever for a lost reply). BasicNavigator is a Node that spins itself
(rclpy.spin_until_future_complete inside waitUntilNav2Active), so it runs on a thread of its own
until Nav2's lifecycle nodes are active, and is then destroyed. nav2_simple_commander and nav2_msgs
are not pip-installable: they are imported when needed, and tests replace them with stand-ins that
have the same API and fields.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PoseStamped

from conceptagent_ros.errors import ConceptAgentError

CANCEL_GRACE_S = 2.0  # for Nav2's canceled result


class NavigatorUnavailable(ConceptAgentError):
    """nav2_simple_commander cannot be imported or Nav2 did not become active."""


@dataclass(frozen=True)
class NavigationOutcome:
    success: bool
    canceled: bool
    message: str


class NavigatorWorker:
    """Waits for Nav2 on a daemon thread; `navigate` sends one NavigateToPose goal and blocks the
    caller (an action server's execute callback on a multi-threaded executor), not an executor.

    `node`: the node the NavigateToPose client is made on (spun by someone else's executor);
    `client` and `goal_type`: a client made already and NavigateToPose.Goal's type (tests pass
    stand-ins with the same blocking calls and fields)."""

    def __init__(self, node: Any = None, namespace: str = "", wait_active: bool = True, localizer: str = "amcl",
                 action: str = "navigate_to_pose", callback_group: Any = None, client: Any = None,
                 goal_type: Any = None, accept_s: float = 10.0, navigate_s: float = 600.0):
        self._ready = threading.Event()
        self._error: str | None = None
        self._args = ("conceptagent_navigator", namespace, wait_active, localizer)
        self.accept_s, self.navigate_s = accept_s, navigate_s
        self.client, self.goal_type = client, goal_type
        if client is None and node is not None:
            try:
                from nav2_msgs.action import NavigateToPose

                from conceptagent_ros.ros.action_client import ActionClient

                self.client = ActionClient(node, NavigateToPose, action, callback_group=callback_group)
                self.goal_type = NavigateToPose.Goal
            except ImportError as e:
                self._error = f"nav2_msgs is not installed ({e}); install ros-$ROS_DISTRO-nav2-msgs"
        self._thread = threading.Thread(target=self._run, name="nav2-navigator", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        node_name, namespace, wait_active, localizer = self._args
        try:
            from nav2_simple_commander.robot_navigator import BasicNavigator
        except ImportError as e:
            self._error = f"nav2_simple_commander is not installed ({e}); install ros-$ROS_DISTRO-nav2-simple-commander"
            self._ready.set()
            return
        if wait_active:
            navigator: Any = BasicNavigator(node_name=node_name, namespace=namespace)
            navigator.waitUntilNav2Active(localizer=localizer)
            navigator.destroy_node()
        self._ready.set()

    def navigate(self, pose: PoseStamped, cancel: threading.Event,
                 on_feedback: Callable[[float], None] | None = None, ready_timeout: float = 30.0) -> NavigationOutcome:
        if not self._ready.wait(ready_timeout):
            raise NavigatorUnavailable(f"Nav2 did not become active within {ready_timeout:.0f} s")
        if self._error:
            raise NavigatorUnavailable(self._error)
        if self.client is None:
            raise NavigatorUnavailable("no NavigateToPose client: the navigator was made without a node")
        goal = self._goal(pose)

        def feedback(msg: Any) -> None:
            if on_feedback is not None:
                on_feedback(float(getattr(msg.feedback, "distance_remaining", 0.0)))

        answer = self.client.send_goal_reliably(goal, feedback, timeout=self.accept_s, cancel=cancel)
        if answer.why == "canceled":
            return NavigationOutcome(False, True, "navigation canceled")
        if answer.handle is None:
            return NavigationOutcome(False, False, f"Nav2 {answer.why_text()} the goal pose")
        ended = self.client.get_result_reliably(answer.handle, timeout=self.navigate_s, cancel=cancel)
        if ended.response is None and ended.why in ("canceled", "timeout"):
            # Nav2 is told to stop, and its canceled result awaited briefly
            answer.handle.cancel_goal_async()
            ended = self.client.get_result_reliably(answer.handle, timeout=CANCEL_GRACE_S)
            if ended.response is None:
                return NavigationOutcome(False, True, "navigation canceled")
        if ended.response is None:
            return NavigationOutcome(False, False, f"Nav2's navigator {ended.why}: the goal's outcome is unknown")
        status, result = ended.response.status, ended.response.result
        if status == GoalStatus.STATUS_SUCCEEDED:
            return NavigationOutcome(True, False, "reached the goal pose")
        if status == GoalStatus.STATUS_CANCELED:
            return NavigationOutcome(False, True, "navigation canceled")
        code, text = getattr(result, "error_code", 0), getattr(result, "error_msg", "")  # Jazzy's result fields
        detail = f" (error {code}: {text})" if code or text else ""
        return NavigationOutcome(False, False, f"Nav2 failed to reach the goal pose{detail}")

    def _goal(self, pose: PoseStamped) -> Any:
        goal = self.goal_type()
        goal.pose = pose
        return goal

    def shutdown(self) -> None:
        self._thread.join(timeout=2.0)
