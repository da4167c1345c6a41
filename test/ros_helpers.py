"""Test plumbing for real rclpy: a context per test on its own DDS domain, futures awaited with
timeouts. Written against rclpy directly (not the package's own client helpers) so that the tests
judge the planner's ROS API from the outside."""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest

# Discovery stays on this machine, so parallel runs on other domains never cross.
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def require_ros():
    """Import rclpy and the generated interfaces; skip where absent, unless the run requires ROS."""
    try:
        import rclpy  # noqa: F401

        from conceptagent_ros.action import ExecuteTask  # noqa: F401
    except ImportError as e:
        if os.environ.get("CONCEPTAGENT_REQUIRE_ROS"):
            pytest.fail(f"ROS 2 is required in this run (CONCEPTAGENT_REQUIRE_ROS) but does not import: {e}")
        pytest.skip(f"ROS 2 not installed: {e}")


def shut_down(context) -> None:
    """Shut a test's context down after collecting what the test left in reference cycles (rclpy
    entities, closures over nodes), here, on this thread, while the context still stands: left to
    the collector, they were freed during a later test, on whatever thread collected (a segfault in
    that test's garbage collection, about 1 run in 20)."""
    import gc

    import rclpy

    gc.collect()
    rclpy.try_shutdown(context=context)


def wait_future(future, timeout: float = 10.0):
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    assert done.wait(timeout), f"future not done within {timeout} s"
    return future.result()


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"{what} not met within {timeout} s")


class Spinning:
    """An executor spinning on a daemon thread. stop() ends the spinning, joins the thread and only
    then shuts the executor down: a node destroyed while the thread still runs its callbacks makes
    rclpy raise InvalidHandle in that thread, and rclpy's shutdown destroys the executor's guard
    conditions without waiting for the thread, which then died on a None guard between two waits."""

    def __init__(self, executor, name: str = "test-spin") -> None:
        self.executor = executor
        self._stopping = threading.Event()
        self.thread = threading.Thread(target=self._spin, daemon=True, name=name)
        self.thread.start()

    def _spin(self) -> None:
        while not self._stopping.is_set() and self.executor.context.ok() and not self.executor._is_shutdown:
            self.executor.spin_once(timeout_sec=0.05)  # a wake-up alone does not end spin_once

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"{self.thread.name}: the executor's spin thread did not stop"
        self.executor.shutdown(timeout_sec=timeout)


def interrupt(process, timeout: float) -> tuple[str, bool]:
    """Ctrl-C a child as a terminal would; its output, and whether it ended within `timeout` (else
    it is killed)."""
    import signal
    import subprocess

    process.send_signal(signal.SIGINT)
    try:
        out, _ = process.communicate(timeout=timeout)
        return out or "", True
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
        return out or "", False


class StandInClientCalls:
    """The blocking calls of the project's ActionClient (send_goal_reliably, get_result_reliably)
    for a stand-in client whose `send_goal_async` returns futures it has already answered (or never
    answers): a stand-in then serves the adapters exactly as it served rclpy's client calls."""

    def send_goal_reliably(self, goal, feedback_callback=None, *, timeout, cancel=None, resend_after=None):
        from conceptagent_ros.ros.action_client import GoalAnswer

        sent = self.send_goal_async(goal)
        if not sent.done():
            return GoalAnswer(None, "timeout")
        handle = sent.result()
        return GoalAnswer(handle) if handle.accepted else GoalAnswer(None, "rejected")

    def get_result_reliably(self, handle, *, timeout, cancel=None, gone_after=None, **_):
        from conceptagent_ros.ros.action_client import ResultAnswer

        result = handle.get_result_async()
        return ResultAnswer(result.result()) if result.done() else ResultAnswer(None, "timeout")
