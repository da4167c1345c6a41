"""Graph processes for commands and benchmarks: a DDS domain of their own, children started on it,
and stopped the way `ros2 launch` stops them (one SIGINT, then a kill if they linger)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from conceptagent_ros.ros.domains import reserved_domain

STOP_SECONDS = 10.0


def graph_command(*args: str) -> list[str]:
    """`conceptagent ARGS...` in a child Python: the same interpreter and install as this process."""
    return [sys.executable, "-m", "conceptagent_ros.cli", *args]


@contextmanager
def isolated_domain() -> Iterator[int]:
    """A reserved ROS_DOMAIN_ID, set for this process (and the children it starts), localhost only."""
    with reserved_domain() as domain:
        os.environ.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        yield domain


def _reap(process: subprocess.Popen[Any], timeout: float = STOP_SECONDS) -> None:
    """Wait for a child that was asked to end; kill it if it has not within `timeout`."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop(process: subprocess.Popen[Any], signum: int = signal.SIGINT, timeout: float = STOP_SECONDS) -> None:
    """Ask one child to end (one signal) and wait for it; kill it if it lingers."""
    if process.poll() is None:
        process.send_signal(signum)
    _reap(process, timeout)


@contextmanager
def running(commands: Sequence[Sequence[str]], quiet: bool = False,
            signum: int = signal.SIGINT) -> Iterator[list[subprocess.Popen[Any]]]:
    """Start each command as a child on the current domain; stop them all on the way out."""
    out = subprocess.DEVNULL if quiet else None
    children = [subprocess.Popen(list(command), env=dict(os.environ), stdout=out, stderr=out) for command in commands]
    try:
        yield children
    finally:
        # One signal each (a second SIGINT would interrupt a graph's own orderly teardown), all
        # first, so the children wind down together; then each is waited for or killed
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)
        for child in children:
            _reap(child)
