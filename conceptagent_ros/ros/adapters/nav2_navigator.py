"""Nav2 through nav2_simple_commander's BasicNavigator, on a worker thread of its own.

BasicNavigator is a Node that spins itself (rclpy.spin_until_future_complete inside goToPose,
isTaskComplete, ...). Called from an action server's execute callback it would spin inside the
executor that owns the server, so it lives on its own thread, and the skill server hands it
requests through a queue. nav2_simple_commander is not pip-installable: it is imported when the
worker starts, and tests replace it with a stand-in module that has the same API.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from geometry_msgs.msg import PoseStamped

from conceptagent_ros.errors import ConceptAgentError

POLL_SECONDS = 0.05


class NavigatorUnavailable(ConceptAgentError):
    """nav2_simple_commander cannot be imported or Nav2 did not become active."""


@dataclass(frozen=True)
class NavigationOutcome:
    success: bool
    canceled: bool
    message: str


@dataclass
class _Request:
    pose: PoseStamped
    cancel: threading.Event
    on_feedback: Callable[[float], None] | None
    done: threading.Event = field(default_factory=threading.Event)
    outcome: NavigationOutcome | None = None


class NavigatorWorker:
    """Owns one BasicNavigator on a daemon thread; `navigate` blocks the caller, not an executor."""

    def __init__(self, node_name: str = "conceptagent_navigator", namespace: str = "", wait_active: bool = True,
                 localizer: str = "amcl"):
        self._requests: queue.Queue[_Request | None] = queue.Queue()
        self._ready = threading.Event()
        self._error: str | None = None
        self._args = (node_name, namespace, wait_active, localizer)
        self._thread = threading.Thread(target=self._run, name="nav2-navigator", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        node_name, namespace, wait_active, localizer = self._args
        try:
            from nav2_simple_commander.robot_navigator import BasicNavigator, TaskResult
        except ImportError as e:
            self._error = f"nav2_simple_commander is not installed ({e}); install ros-$ROS_DISTRO-nav2-simple-commander"
            self._ready.set()
            return
        navigator: Any = BasicNavigator(node_name=node_name, namespace=namespace)
        if wait_active:
            navigator.waitUntilNav2Active(localizer=localizer)
        self._ready.set()
        while True:
            request = self._requests.get()
            if request is None:
                break
            request.outcome = self._navigate(navigator, TaskResult, request)
            request.done.set()
        navigator.destroy_node()

    @staticmethod
    def _navigate(navigator: Any, task_result: Any, request: _Request) -> NavigationOutcome:
        accepted = navigator.goToPose(request.pose)
        if accepted is False:  # Jazzy returns whether the goal was accepted; Humble returns None
            return NavigationOutcome(False, False, "Nav2 rejected the goal pose")
        while not navigator.isTaskComplete():
            if request.cancel.is_set():
                navigator.cancelTask()
            feedback = navigator.getFeedback()
            if feedback is not None and request.on_feedback is not None:
                request.on_feedback(float(getattr(feedback, "distance_remaining", 0.0)))
            time.sleep(POLL_SECONDS)
        result = navigator.getResult()
        if result == task_result.SUCCEEDED:
            return NavigationOutcome(True, False, "reached the goal pose")
        if result == task_result.CANCELED:
            return NavigationOutcome(False, True, "navigation canceled")
        detail = ""
        if hasattr(navigator, "getTaskError"):  # newer nav2_simple_commander: (error_code, error_msg)
            code, text = navigator.getTaskError()
            detail = f" (error {code}: {text})"
        return NavigationOutcome(False, False, f"Nav2 failed to reach the goal pose{detail}")

    def navigate(self, pose: PoseStamped, cancel: threading.Event,
                 on_feedback: Callable[[float], None] | None = None, ready_timeout: float = 30.0) -> NavigationOutcome:
        if not self._ready.wait(ready_timeout):
            raise NavigatorUnavailable(f"Nav2 did not become active within {ready_timeout:.0f} s")
        if self._error:
            raise NavigatorUnavailable(self._error)
        request = _Request(pose, cancel, on_feedback)
        self._requests.put(request)
        request.done.wait()
        assert request.outcome is not None
        return request.outcome

    def shutdown(self) -> None:
        self._requests.put(None)
        self._thread.join(timeout=2.0)
