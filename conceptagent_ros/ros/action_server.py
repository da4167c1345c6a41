"""The project's action server: rclpy's ActionServer that answers a resent goal as accepted.

A client whose goal response was lost sends the goal again with the same id (ros/action_client.py).
rclpy's server answers a goal id it already tracks with "rejected" (`_execute_goal_request`: the
goal callback is skipped and `accepted` stays False), which a client cannot tell from a real
refusal. This server answers such a copy with the goal's first answer, accepted and stamped as it
was, and starts nothing: the goal runs once."""
from __future__ import annotations

from typing import Any

from rclpy.action import ActionServer as _RclpyActionServer
from rclpy.action.server import RCLError


class ActionServer(_RclpyActionServer):
    async def _execute_goal_request(self, request_header_and_message: Any) -> None:
        request_header, goal_request = request_header_and_message
        with self._lock:
            known = self._goal_handles.get(bytes(goal_request.goal_id.uuid))
        if known is None:
            await super()._execute_goal_request(request_header_and_message)
            return
        response = self._action_type.Impl.SendGoalService.Response()
        response.accepted = True
        response.stamp = known._goal_info.stamp
        try:
            self._handle.send_goal_response(request_header, response)
        except RCLError:
            self._logger.warning("Failed to answer a resent goal (the client may have gone away)")
