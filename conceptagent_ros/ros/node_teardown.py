"""A node's action servers and clients go with it.

rclpy's `Node.destroy_node` destroys publishers, subscriptions, services, clients and timers, but
not the action servers and clients (they are waitables): those stay in reference cycles until the
garbage collector frees them -- later, on whichever thread happens to collect, after their context
and its DDS participant may be gone. A test run segfaulted that way in an unrelated test's garbage
collection (about 1 run in 20 of test_scene_graph_node.py). Nodes that own actions mix this in so
that they are destroyed with the node, on the thread that destroys it."""
from __future__ import annotations

from typing import Any

from rclpy.action import ActionClient, ActionServer
from rclpy.exceptions import InvalidHandle


def destroy_actions(node: Any) -> None:
    """Destroy every action server and client `node` still holds (each removes itself from it)."""
    for waitable in list(node.waitables):
        if isinstance(waitable, (ActionServer, ActionClient)):
            try:
                waitable.destroy()
            except InvalidHandle:  # destroyed already, with its handle
                pass


class DestroysItsActions:
    """Mixed in before rclpy's Node (or LifecycleNode): destroy_node destroys the node's actions first."""

    def destroy_node(self) -> None:
        destroy_actions(self)
        super().destroy_node()  # type: ignore[misc]
