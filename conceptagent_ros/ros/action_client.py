"""rclpy's ActionClient without the race of ros2/rclpy#1123.

rclpy (Jazzy, as installed here) sends a goal, cancel or result request and only then records its
sequence number; when the executor's thread takes the response in between -- a fast server, a
client spun on another thread, as every client here is -- the response is dropped ("Ignoring
unexpected goal response") and the future never completes: a task that waits forever for a goal
the planner did accept. Seen here as a goal unanswered for 60 s in `ros bench --loss` and as a
rare failure of the hostile-traffic test. Upstream fixed it with a lock (ros2/rclpy#1308 and its
backports); this subclass does the same for rclpy versions without it: sending and recording a
request happen under a lock that taking data also holds.
"""
from __future__ import annotations

import threading
from typing import Any

from rclpy.action import ActionClient as _RclpyActionClient


class ActionClient(_RclpyActionClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_lock = threading.RLock()

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
