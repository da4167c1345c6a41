"""Executors spun on threads of their own, whose death is never silent.

An exception out of a callback ends `executor.spin()`, and on a daemon thread it ended it
silently: nothing spun any more, and every later reply was "not answered in time" (the bench
client's thread died of an AttributeError inside the action client's `take_data`, and the command
then blamed the planner). A SpinThread prints what killed it, with its traceback, to stderr the
moment it dies, and `raise_if_dead()` (called by every wait in ros/futures.py) turns that into an
ExecutorDied in whichever thread waits, so the process fails at once with the cause.
"""
from __future__ import annotations

import sys
import threading
import traceback
from typing import Any

from rclpy.executors import ExternalShutdownException, ShutdownException

from conceptagent_ros.errors import ConceptAgentError

STOP_CHECK_S = 0.05  # how often a spinning SpinThread looks whether it is told to stop

_dead: list[tuple[str, BaseException]] = []
_dead_lock = threading.Lock()


class ExecutorDied(ConceptAgentError):
    """A thread spinning an executor ended with an exception: nothing is answered any more."""


class SpinThread(threading.Thread):
    """`SpinThread(executor, name).start()`: spins `executor` (or runs `target`, when given) until
    `stop()`, which ends the spinning and then shuts the executor down."""

    def __init__(self, executor: Any, name: str, target: Any = None):
        super().__init__(name=name, daemon=True)
        self.executor = executor
        self._stopping = threading.Event()
        self._spin = target if target is not None else self._spin_until_stopped
        self.error: BaseException | None = None

    def _spin_until_stopped(self) -> None:
        """`executor.spin()`, but ended from outside before the executor is shut down. rclpy's
        Executor.shutdown destroys the executor's guard conditions without waiting for the thread
        that spins it (its wait for outstanding work is skipped once it has set _is_shutdown), and a
        thread between two waits then met None for a guard ("'NoneType' object has no attribute
        'handle'") and died: a teardown that failed tests at random."""
        # (an executor shut down elsewhere ends it too, as it ends spin())
        while not self._stopping.is_set() and self.executor.context.ok() and not self.executor._is_shutdown:
            # a wake-up alone does not end spin_once (rclpy waits again inside it): its timeout does
            self.executor.spin_once(timeout_sec=STOP_CHECK_S)

    def stop(self, timeout: float = 5.0) -> bool:
        """End the spinning (within STOP_CHECK_S, or once the callback it runs returns), then shut the
        executor down; True when the thread has ended within `timeout`."""
        self._stopping.set()
        if self.is_alive():
            self.join(timeout)
        self.executor.shutdown(timeout_sec=timeout)
        return not self.is_alive()

    def run(self) -> None:
        try:
            self._spin()
        except (ExternalShutdownException, ShutdownException, KeyboardInterrupt):
            pass  # the context or the executor was shut down: the ordinary end
        except BaseException as e:  # noqa: BLE001 - recorded and reported, never swallowed
            self.error = e
            with _dead_lock:
                _dead.append((self.name, e))
            print(f"conceptagent: the executor thread {self.name!r} died; no callback of its nodes runs any more:\n"
                  + "".join(traceback.format_exception(e)), file=sys.stderr, flush=True)


def raise_if_dead() -> None:
    """Raise ExecutorDied if any SpinThread of this process has died."""
    with _dead_lock:
        if not _dead:
            return
        name, error = _dead[0]
    raise ExecutorDied(f"the executor thread {name!r} died ({type(error).__name__}: {error}); "
                       "nothing it spun answers any more (traceback above)") from error


def forget_dead() -> None:
    """For tests that kill a spin thread on purpose."""
    with _dead_lock:
        _dead.clear()
