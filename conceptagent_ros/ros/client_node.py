"""A node of a client's own, spun on a thread: what every command and benchmark that talks to a
running graph from outside its callbacks uses (`ros send`, `say`, the benchmarks, the suite's operator).

The caller blocks on futures outside any callback while a SingleThreadedExecutor spins the node
on a daemon thread, so one client never deadlocks on its own replies."""
from __future__ import annotations

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from conceptagent_ros.ros.spin import init_context
from conceptagent_ros.ros.spin_threads import SpinThread


class ClientNode:
    """`ClientNode(name, namespace)` makes its own context (on this process's ROS_DOMAIN_ID); pass a
    `context` to join one that is already up (a graph in this process), which it then leaves alone."""

    def __init__(self, name: str, namespace: str, context: Context | None = None):
        self.owns_context = context is None
        self.context = context if context is not None else init_context()
        self.node = Node(name, namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = SpinThread(self.executor, f"{name}-spin")
        self.thread.start()

    def stop_spinning(self) -> None:
        # The spin thread must be out of rclpy before the node or context goes, or the process aborts at exit.
        self.thread.stop(timeout=2.0)

    def close(self) -> None:
        self.stop_spinning()
        self.node.destroy_node()
        if self.owns_context:
            rclpy.try_shutdown(context=self.context)

    def __enter__(self) -> ClientNode:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
