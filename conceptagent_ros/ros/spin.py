"""How every node executable runs: init, build the node (a bad configuration exits 2 with its
reason), spin on a multi-threaded executor, and always shut down cleanly on Ctrl-C; and the
contexts of our own that in-process graphs and clients use."""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from rclpy.context import Context
from rclpy.executors import Executor, ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.ros.dds_profile import use_shipped_profile


def run_node(make_node: Callable[[], Any], threads: int = 6, args: list[str] | None = None,
             before_spin: Callable[[Any], None] | None = None) -> None:
    use_shipped_profile()
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
        # A node running long callbacks (the planner's tasks) is told to end them before it goes
        stop_tasks = getattr(node, "stop_tasks", None)
        if stop_tasks is not None:
            stop_tasks()
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


def init_context(domain_id: int | None = None, args: Sequence[str] | None = None) -> Context:
    """A context of our own. rclpy's SIGINT handler is left out: it would shut contexts down under
    the executors while our own Ctrl-C handling (KeyboardInterrupt) tears the graph down in order."""
    use_shipped_profile()
    context = Context()
    kwargs: dict[str, Any] = {"context": context, "args": list(args or []),
                              "signal_handler_options": SignalHandlerOptions.NO}
    if domain_id is not None:
        kwargs["domain_id"] = domain_id
    rclpy.init(**kwargs)
    return context
