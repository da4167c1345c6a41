"""The project's action client: rclpy's ActionClient made to survive a lost or late reply.

Every action client of the project (ExecuteTask, ExecuteSkill, Nav2's NavigateToPose, the arm's
FollowJointTrajectory, the gripper's command) is this class, and every goal goes through
`send_goal_reliably` and `get_result_reliably`:

- **The request race** (ros2/rclpy#1123). rclpy (Jazzy, as installed) sends a goal, cancel or
  result request and only then records its sequence number; a response taken in between by a
  thread spinning the client is dropped ("Ignoring unexpected goal response") and the future never
  completes. Upstream fixed it with a lock (ros2/rclpy#1308 and its backports); here sending and
  recording a request happen under a lock that taking data also holds. The lock exists before the
  base class adds the client to its node: an executor already spinning that node may take data
  from the client at once, and a lock made after `super().__init__()` killed that executor's thread
  with an AttributeError (seen in `ros bench`).
- **A goal response that never comes** (lost under packet loss, or sent by a server that had not
  yet matched this client's reader, which DDS never replays). The goal counts as accepted as soon
  as its feedback or a status naming its id arrives, whatever the goal response does. Without any
  of these, after `RESEND_AFTER_S` the server is asked about the goal by id (a result request: a
  server answers one for an unknown goal at once with STATUS_UNKNOWN, rclpy's
  `_execute_get_result_request` and rclcpp_action's `execute_result_request_received` alike), and
  only a goal the server says it does not know is sent again, with the same id. The project's own
  servers (ros/action_server.py) also answer a copy of a goal they already have as accepted.
  A resend is never sent to a server that says it has the goal: rclcpp_action's server (before
  Kilted) calls `rcl_action_accept_new_goal` for a duplicate id, which fails ("goal ID already
  exists", rcl_action/action_server.c), and throws out of its executor.
- **A result response that never comes.** The result is asked for again while the status topic
  says the goal has ended and no result came, and the server is probed every `GOAL_PROBE_S`: a
  server that restarted answers that it no longer knows the goal, and one that left the graph for
  `gone_after` seconds is reported gone, instead of the caller waiting out its timeout.
- **Late answers to abandoned requests** are dropped quietly: a server defers every result request
  until its goal ends, then answers them all; rclpy would log each unwanted answer as "Ignoring
  unexpected result response. There may be more than one action server".

The blocking calls wait with `futures.wait_done`, so a dead spin thread fails them at once
(ros/spin_threads.py) rather than letting them wait out their timeouts.
"""
from __future__ import annotations

import threading
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from action_msgs.msg import GoalStatus
from rclpy._rclpy_pybind11 import InvalidHandle
from rclpy.action import ActionClient as _RclpyActionClient
from rclpy.action.client import ClientGoalHandle
from unique_identifier_msgs.msg import UUID

from conceptagent_ros.ros.futures import wait_done
from conceptagent_ros.ros.spin_threads import SpinThread

ABANDONED_KEPT = 1000
RESEND_AFTER_S = 1.0  # a goal unanswered this long: ask the server about it, then send it again
RESULT_RETRY_S = 0.5  # a goal the status topic says has ended, and no result yet: ask again
GOAL_PROBE_S = 2.0  # how often a running goal's server is asked whether it still knows the goal
POLL_S = 0.05
DESTROY_WAIT_S = 2.0  # how long destroy() waits for the node's executor to destroy the client between its waits
TERMINAL = (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED, GoalStatus.STATUS_CANCELED)


@dataclass
class GoalAnswer:
    """What came of a goal: `handle` when accepted; otherwise `why` is "rejected", "timeout" (no
    answer within the wait) or "canceled" (the caller's cancel event was set first)."""

    handle: ClientGoalHandle | None
    why: str = ""

    @property
    def accepted(self) -> bool:
        return self.handle is not None

    def why_text(self) -> str:
        """For a message: "refused", "did not answer" or "was canceled before it accepted"."""
        return {"rejected": "refused", "timeout": "did not answer",
                "canceled": "was canceled before it accepted"}.get(self.why, self.why)


@dataclass
class ResultAnswer:
    """The goal's result response (`.status`, `.result`), or None and `why`: "canceled", "timeout",
    "lost" (the server no longer knows the goal: it restarted) or "gone" (the server left the graph)."""

    response: Any
    why: str = ""


class ActionClient(_RclpyActionClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Before super().__init__(): it adds this client to the node, whose executor may take data now
        self._request_lock = threading.RLock()
        self._abandoned: set[int] = set()  # result requests given up on
        self._settled: set[int] = set()  # goal requests whose goal was answered another way
        self._evidence: dict[bytes, int] = {}  # goal id -> status seen in feedback or on the status topic
        self._news = threading.Condition(self._request_lock)
        self._destroyed = False
        super().__init__(*args, **kwargs)

    # -- the reliable calls ------------------------------------------------------------------------
    def send_goal_reliably(self, goal: Any, feedback_callback: Callable[[Any], None] | None = None, *,
                           timeout: float, cancel: threading.Event | None = None,
                           resend_after: float = RESEND_AFTER_S) -> GoalAnswer:
        """Send `goal` and block until the server accepts or rejects it (see the module's docstring).
        Call from a thread that does not spin this client. On timeout or cancel, a goal that the
        server took after all is canceled, so no goal runs unwatched."""
        goal_id = UUID(uuid=list(uuid.uuid4().bytes))
        key = bytes(goal_id.uuid)
        with self._request_lock:
            self._evidence[key] = GoalStatus.STATUS_UNKNOWN  # watched: execute() records what it hears of it
        copies = [self.send_goal_async(goal, feedback_callback, goal_id)]
        deadline = time.monotonic() + timeout
        asked_at, probe, probed_at, refused_copy = time.monotonic(), None, 0.0, False
        try:
            while True:
                for copy in copies:
                    if copy.done() and copy.result() is not None:
                        handle = copy.result()
                        if handle.accepted:
                            return GoalAnswer(self._settle(copies, handle))
                        if copy is copies[0] and len(copies) == 1:
                            return GoalAnswer(self._settle(copies, None), "rejected")
                        # A copy refused: rclpy's own server refuses a goal id it already has, so
                        # only the server's word that it does not know the goal makes it a refusal
                        refused_copy = True
                seen = self._evidence.get(key, GoalStatus.STATUS_UNKNOWN)
                if seen != GoalStatus.STATUS_UNKNOWN:
                    return GoalAnswer(self._settle(copies, self._adopt(goal_id, seen)))
                now = time.monotonic()
                if (cancel is not None and cancel.is_set()) or now > deadline:
                    self._give_up(copies, goal_id)
                    return GoalAnswer(None, "canceled" if cancel is not None and cancel.is_set() else "timeout")
                if probe is None and now - asked_at > resend_after:
                    probe, probed_at = self._get_result_async(self._adopt(goal_id, None, register=False)), now
                elif probe is not None and probe.done():
                    answer, probe = probe.result(), None
                    if answer is not None and answer.status == GoalStatus.STATUS_UNKNOWN:
                        if refused_copy:
                            return GoalAnswer(self._settle(copies, None), "rejected")
                        copies.append(self.send_goal_async(goal, feedback_callback, goal_id))
                        asked_at = now
                    elif answer is not None:  # the server has it, and it has already ended
                        return GoalAnswer(self._settle(copies, self._adopt(goal_id, answer.status)))
                elif probe is not None and now - probed_at > resend_after:
                    # Unanswered: a server that has the goal running defers the answer to its end
                    # (its status will say so), or the probe itself was lost: ask again
                    probe.cancel()
                    probe, asked_at = None, now
                with self._news:
                    self._news.wait(POLL_S)
        finally:
            if probe is not None:
                probe.cancel()
            with self._request_lock:
                self._evidence.pop(key, None)

    def get_result_reliably(self, handle: ClientGoalHandle, *, timeout: float, cancel: threading.Event | None = None,
                            gone_after: float | None = None, probe_every: float = GOAL_PROBE_S,
                            retry_after: float = RESULT_RETRY_S) -> ResultAnswer:
        """Block until the goal's result comes (see the module's docstring for the retries)."""
        future = self._get_result_async(handle)
        now = time.monotonic()
        deadline, next_probe = now + timeout, now + probe_every
        ended_at: float | None = None
        gone_since: float | None = None
        probe: Any = None
        try:
            while not wait_done(future, retry_after, cancel):
                now = time.monotonic()
                if cancel is not None and cancel.is_set():
                    return ResultAnswer(None, "canceled")
                if now > deadline:
                    return ResultAnswer(None, "timeout")
                if probe is not None and probe.done():
                    answer, probe = probe.result(), None
                    if answer is not None and answer.status == GoalStatus.STATUS_UNKNOWN:
                        return ResultAnswer(None, "lost")
                    if answer is not None and answer.status in TERMINAL:
                        return ResultAnswer(answer)
                if now >= next_probe:
                    # An unanswered probe went to a server that is gone, or is deferred to the goal's
                    # end: a request is not replayed to a server that appears later, so ask anew
                    if probe is not None:
                        probe.cancel()
                    probe, next_probe = self._get_result_async(handle), now + probe_every
                if handle.status in TERMINAL:
                    if ended_at is None:
                        ended_at = now
                    elif now - ended_at > retry_after:
                        future.cancel()
                        future, ended_at = self._get_result_async(handle), None
                if gone_after is not None:
                    # The graph can miss a live server for a moment under load, hence the grace
                    if self.server_is_ready():
                        gone_since = None
                    elif gone_since is None:
                        gone_since = now
                    elif now - gone_since > gone_after:
                        return ResultAnswer(None, "gone")
            answer = future.result()
            if answer is None or answer.status == GoalStatus.STATUS_UNKNOWN:
                return ResultAnswer(None, "lost")
            return ResultAnswer(answer)
        finally:
            if probe is not None:
                probe.cancel()
            if not future.done():
                future.cancel()

    def cancel_goal_id(self, goal_id: UUID) -> Any:
        """Ask the server to cancel a goal by id, whether or not this client ever got its handle."""
        return self._cancel_goal_async(self._adopt(goal_id, None, register=False))

    # -- bookkeeping -------------------------------------------------------------------------------
    def _adopt(self, goal_id: UUID, status: int | None, register: bool = True) -> ClientGoalHandle:
        """A handle for a goal the server has, made without its goal response (or one to address a
        probe to). Registered, it follows the status topic as any accepted goal's handle does."""
        response = self._action_type.Impl.SendGoalService.Response()
        response.accepted = True
        key = bytes(goal_id.uuid)
        with self._request_lock:
            existing = self._handle_of(goal_id)
            if existing is not None:
                return existing
            handle = ClientGoalHandle(self, goal_id, response)
            if status is not None:
                handle._status = status
            if register and status not in TERMINAL:
                self._goal_handles[key] = weakref.ref(handle)
        return handle

    def _settle(self, copies: list[Any], handle: ClientGoalHandle | None) -> ClientGoalHandle | None:
        """The goal is answered: answers still to come for its other copies are dropped quietly (a
        second "accepted" for the same id would make rclpy raise in the executor's thread)."""
        with self._request_lock:
            for copy in copies:
                if not copy.done():
                    sequence = self._sequence_of(copy, self._pending_goal_requests)
                    if sequence is not None:
                        self._settled.add(sequence)
                    self._remove_pending_goal_request(copy)
            if len(self._settled) > ABANDONED_KEPT:
                self._settled.clear()
        return handle

    def _give_up(self, copies: list[Any], goal_id: UUID) -> None:
        """No answer in time: a copy the server accepts after all is canceled when its answer comes,
        and the server is asked now to cancel the goal should it have it."""
        for copy in copies:
            copy.add_done_callback(_cancel_if_accepted)
        self.cancel_goal_id(goal_id)

    def _handle_of(self, goal_id: UUID | None) -> ClientGoalHandle | None:
        reference = self._goal_handles.get(bytes(goal_id.uuid)) if goal_id is not None else None
        return reference() if reference is not None else None

    @staticmethod
    def _sequence_of(future: Any, pending: dict[int, Any]) -> int | None:
        return next((sequence for sequence, f in pending.items() if f is future), None)

    # -- rclpy's hooks, under the lock -------------------------------------------------------------
    def _remove_pending_result_request(self, future: Any) -> None:
        with self._request_lock:
            sequence = self._sequence_of(future, self._pending_result_requests)
            goal_id = self._result_sequence_number_to_goal_id.get(sequence) if sequence is not None else None
            key = bytes(goal_id.uuid) if goal_id is not None else None
            feedback = self._feedback_callbacks.get(key) if key is not None else None
            if future.cancelled() and sequence is not None:
                self._abandoned.add(sequence)
                if len(self._abandoned) > ABANDONED_KEPT:  # answers that never came (a server that died)
                    self._abandoned.clear()
            super()._remove_pending_result_request(future)
            # rclpy drops the goal's feedback callback with any result request; only a final result ends it
            answer = None if future.cancelled() or future.exception() is not None else future.result()
            if feedback is not None and (answer is None or answer.status not in TERMINAL):
                self._feedback_callbacks[key] = feedback

    async def execute(self, taken_data: Any) -> None:
        with self._request_lock:
            if "goal" in taken_data:
                sequence_number, response = taken_data["goal"]
                same_goal = self._handle_of(self._goal_sequence_number_to_goal_id.get(sequence_number))
                if sequence_number in self._settled:
                    self._settled.discard(sequence_number)
                    taken_data = {k: v for k, v in taken_data.items() if k != "goal"}
                elif response.accepted and same_goal is not None:
                    # A second copy of a goal accepted already (or adopted from its status): rclpy
                    # would raise "Two goals were accepted with the same ID" in this thread
                    taken_data = {k: v for k, v in taken_data.items() if k != "goal"}
                    pending = self._pending_goal_requests.get(sequence_number)
                    if pending is not None:
                        pending.set_result(same_goal)
            if "result" in taken_data:
                sequence_number = taken_data["result"][0]
                if sequence_number in self._abandoned:
                    self._abandoned.discard(sequence_number)
                    taken_data = {k: v for k, v in taken_data.items() if k != "result"}
            noticed = False
            if "feedback" in taken_data:
                key = bytes(taken_data["feedback"].goal_id.uuid)
                if self._evidence.get(key) == GoalStatus.STATUS_UNKNOWN:
                    self._evidence[key] = GoalStatus.STATUS_EXECUTING
                    noticed = True
            if "status" in taken_data:
                for status in taken_data["status"].status_list:
                    key = bytes(status.goal_info.goal_id.uuid)
                    if key in self._evidence and status.status != GoalStatus.STATUS_UNKNOWN:
                        self._evidence[key] = status.status
                        noticed = True
            if noticed or "goal" in taken_data:
                self._news.notify_all()
        await super().execute(taken_data)

    def take_data(self) -> Any:
        with self._request_lock:
            return super().take_data()

    def destroy(self) -> None:
        """Destroy the client on the thread that spins its node, between two of its waits. rclpy's
        destroy frees the handle at once, and an executor spinning the node in another thread that
        had already gathered this client then put the freed handle in its wait set ("action client
        pointer is invalid", rcl_action/action_client.c): the spin thread died, and every task after
        it failed (make test's graph suite, 2026-12-04, a client made and destroyed per task).
        Called from a spin thread, or where no executor spins the node, it is destroyed at once."""
        executor = self._node.executor
        if executor is None or getattr(executor, "_is_shutdown", False) \
                or isinstance(threading.current_thread(), SpinThread):
            self._destroy_now()
            return
        done = threading.Event()
        executor.create_task(self._destroy_now).add_done_callback(lambda _: done.set())
        if not done.wait(DESTROY_WAIT_S):  # nothing spins the node now: nothing waits on the handle either
            self._destroy_now()

    def _destroy_now(self) -> None:
        with self._request_lock:
            if self._destroyed:
                return
            self._destroyed = True
        try:
            super().destroy()
        except InvalidHandle:  # its node was destroyed first, and the handle with it
            pass

    def send_goal_async(self, goal: Any, feedback_callback: Any = None, goal_uuid: Any = None) -> Any:
        with self._request_lock:
            return super().send_goal_async(goal, feedback_callback, goal_uuid)

    def _cancel_goal_async(self, goal_handle: Any) -> Any:
        with self._request_lock:
            return super()._cancel_goal_async(goal_handle)

    def _get_result_async(self, goal_handle: Any) -> Any:
        with self._request_lock:
            return super()._get_result_async(goal_handle)


def _cancel_if_accepted(sent: Any) -> None:
    handle = sent.result() if not sent.cancelled() else None
    if handle is not None and handle.accepted:
        handle.cancel_goal_async()
