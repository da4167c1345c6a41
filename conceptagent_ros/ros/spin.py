"""How every node executable runs: init, build the node (a bad configuration exits 2 with its
reason), spin on a multi-threaded executor, and always shut down cleanly on Ctrl-C."""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor

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
    executor = make_executor(threads)
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


def make_executor(threads: int, context: Any = None) -> Executor:
    """threads=1: a single-threaded executor, for nodes none of whose callbacks block."""
    if threads <= 1:
        return SingleThreadedExecutor(context=context)
    return MultiThreadedExecutor(num_threads=threads, context=context)


def autostart_lifecycle(node: Any) -> None:
    """Configure and activate a lifecycle node whose `autostart` parameter is set; a failed
    configure (its on_configure logged what failed to load) exits 2."""
    from rclpy.lifecycle import TransitionCallbackReturn

    if node.get_parameter("autostart").value:
        if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
            raise SystemExit(2)
        node.trigger_activate()
