"""ros2/rclpy#1123 made to happen: a goal response that arrives between rclpy sending the goal
request and recording its sequence number is dropped, and the goal's future never completes.
The send is slowed down here (the request goes out, then the sending thread pauses) so that the
spinning thread always takes the response inside that window. rclpy's own ActionClient (as
installed) loses the goal; the project's ActionClient does not."""
from __future__ import annotations

import threading
import time

import pytest
from ros_helpers import require_ros

require_ros()

import rclpy  # noqa: E402
from rclpy.action import ActionClient as RclpyActionClient  # noqa: E402
from rclpy.action import ActionServer  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from conceptagent_ros.action import ExecuteTask  # noqa: E402
from conceptagent_ros.ros.action_client import ActionClient  # noqa: E402


class SlowSend:
    """The client's rcl handle, pausing right after each goal request has gone out."""

    def __init__(self, handle: object, pause: float):
        self._handle, self._pause = handle, pause

    def send_goal_request(self, request: object) -> int:
        sequence = self._handle.send_goal_request(request)  # type: ignore[attr-defined]
        time.sleep(self._pause)  # the response arrives and is taken meanwhile
        return sequence

    def __getattr__(self, name: str) -> object:
        return getattr(self._handle, name)


def _goal_answered(client_class: type, domain: int) -> bool:
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node("race_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def finish(goal_handle):  # noqa: ANN001, ANN202
        goal_handle.succeed()
        return ExecuteTask.Result(success=True)

    server = ActionServer(node, ExecuteTask, "race_probe", execute_callback=finish)
    client = client_class(node, ExecuteTask, "race_probe")
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        assert client.wait_for_server(timeout_sec=10.0)
        client._client_handle = SlowSend(client._client_handle, 0.5)
        future = client.send_goal_async(ExecuteTask.Goal(instruction="probe"))
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        return done.wait(5.0)
    finally:
        executor.shutdown(timeout_sec=2.0)
        spinner.join(timeout=2.0)
        client.destroy()
        server.destroy()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_the_race_loses_rclpys_goal_and_not_ours() -> None:
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as domain:
        if _goal_answered(RclpyActionClient, domain):
            pytest.skip("this rclpy has the upstream fix (ros2/rclpy#1308): nothing to show")
        assert _goal_answered(ActionClient, domain)
