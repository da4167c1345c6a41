"""rclpy's ActionClient without the race of ros2/rclpy#1123.

rclpy (Jazzy, as installed here) sends a goal, cancel or result request and only then records its
sequence number; when the executor's thread takes the response in between -- a fast server, a
client spun on another thread, as every client here is -- the response is dropped ("Ignoring
unexpected goal response") and the future never completes: a task that waits forever for a goal
the planner did accept. Seen here as a goal unanswered for 60 s in `ros bench --loss` and as a
rare failure of the hostile-traffic test. Upstream fixed it with a lock (ros2/rclpy#1308 and its
backports); this subclass does the same for rclpy versions without it: sending and recording a
request happen under a lock that taking data also holds.

It also drops, quietly, the late answer to a result request the caller gave up on (canceled the
future of): robot_client probes a running skill's server every few seconds and abandons each
unanswered probe, and a server defers every result request until its goal ends, then answers them
all; rclpy would log each such answer as "Ignoring unexpected result response. There may be more
than one action server", which there is not.
"""
from __future__ import annotations

import threading
from typing import Any

from rclpy.action import ActionClient as _RclpyActionClient

ABANDONED_KEPT = 1000


class ActionClient(_RclpyActionClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_lock = threading.RLock()
        self._abandoned: set[int] = set()  # sequence numbers of result requests given up on

    def _remove_pending_result_request(self, future: Any) -> None:
        if future.cancelled():
            with self._request_lock:
                self._abandoned.update(seq for seq, f in self._pending_result_requests.items() if f is future)
                if len(self._abandoned) > ABANDONED_KEPT:  # answers that never came (a server that died)
                    self._abandoned.clear()
        super()._remove_pending_result_request(future)

    async def execute(self, taken_data: Any) -> None:
        if "result" in taken_data:
            with self._request_lock:
                sequence_number = taken_data["result"][0]
                if sequence_number in self._abandoned:
                    self._abandoned.discard(sequence_number)
                    taken_data = {k: v for k, v in taken_data.items() if k != "result"}
        await super().execute(taken_data)

    def take_data(self) -> Any:
        with self._request_lock:
            return super().take_data()

    def send_goal_async(self, goal: Any, feedback_callback: Any = None, goal_uuid: Any = None) -> Any:
        with self._request_lock:
            return super().send_goal_async(goal, feedback_callback, goal_uuid)

    def _cancel_goal_async(self, goal_handle: Any) -> Any:
        with self._request_lock:
            return super()._cancel_goal_async(goal_handle)

    def _get_result_async(self, goal_handle: Any) -> Any:
        with self._request_lock:
            return super()._get_result_async(goal_handle)
