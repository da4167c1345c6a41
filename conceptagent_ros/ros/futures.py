"""Waiting on rclpy futures from a thread that is not spinning them (an action's execute callback,
a client thread): the executor's other threads complete the future, this one only waits. A wait
ends at once with ExecutorDied when a thread spinning an executor has died (ros/spin_threads.py):
the future would never complete, and waiting out the timeout would blame the other side."""
from __future__ import annotations

import threading
import time
from typing import Any

from conceptagent_ros.ros.spin_threads import raise_if_dead

POLL_SECONDS = 0.01  # how often a cancel is noticed


def wait_done(future: Any, timeout: float, cancel: threading.Event | None = None) -> bool:
    """True when the future is done within the timeout; False on timeout or when `cancel` is set."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    deadline = time.monotonic() + timeout
    while not done.wait(POLL_SECONDS):
        raise_if_dead()
        if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
            return future.done()
    return True
