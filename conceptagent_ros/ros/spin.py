"""How every node executable runs: init, build the node (a bad configuration exits 2 with its
reason), spin on a multi-threaded executor, and always shut down cleanly on Ctrl-C."""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor

from conceptagent_ros.errors import ConceptAgentError


def run_node(make_node: Callable[[], Any], threads: int = 6, args: list[str] | None = None,
             before_spin: Callable[[Any], None] | None = None) -> None:
    rclpy.init(args=args)
    try:
        node = make_node()
    except ConceptAgentError as e:
        print(f"{sys.argv[0]}: error: {e}", file=sys.stderr)
        rclpy.try_shutdown()
        raise SystemExit(2) from e
    executor = MultiThreadedExecutor(num_threads=threads)
    executor.add_node(node)
    try:
        if before_spin is not None:
            before_spin(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
