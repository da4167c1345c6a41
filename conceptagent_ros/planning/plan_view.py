"""What a planner intends, as a small tree anyone can draw: MCTS's search tree with visits and
values, Tree-Planner's action tree with support and validity, LLM-Planner's remaining plan as a
chain. The ROS node turns it into rviz markers; nothing here knows about ROS."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

MAX_DEPTH = 4
MAX_CHILDREN = 5  # the most-visited / best-supported ones; a tree of 100 branches is not a picture


@dataclass(frozen=True)
class PlanNode:
    label: str  # the skill call, or "now" at the root
    chosen: bool = False  # on the path the planner is following
    visits: int = 0  # MCTS visits, or how many sampled plans pass through (Tree-Planner)
    value: float | None = None  # MCTS mean value in 0..1
    valid: bool = True  # False: refused or invalidated
    children: tuple[PlanNode, ...] = field(default_factory=tuple)

    def size(self) -> int:
        return 1 + sum(c.size() for c in self.children)


class PlanViewer(Protocol):
    def plan_view(self) -> PlanNode | None: ...


def plan_view_of(proposer: object) -> PlanNode | None:
    """The proposer's plan view, or None for planners that keep no lookahead (react, base)."""
    view = getattr(proposer, "plan_view", None)
    return view() if callable(view) else None


def chain(labels: Sequence[str]) -> PlanNode:
    """A linear plan: the root, then each step as the only child of the one before."""
    node: PlanNode | None = None
    for label in reversed(labels):
        node = PlanNode(label, chosen=True, children=(node,) if node else ())
    return PlanNode("now", chosen=True, children=(node,) if node else ())


T = TypeVar("T")


def tree(root: T, children: Callable[[T], Sequence[T]], describe: Callable[[T, bool], PlanNode],
         rank: Callable[[T], Any], best: Callable[[T], T | None]) -> PlanNode:
    """Copy a planner's tree: at most MAX_CHILDREN per node (by rank), MAX_DEPTH deep; the chosen
    path follows `best` from the root."""

    def copy(node: T, depth: int, on_path: bool) -> PlanNode:
        kids = sorted(children(node), key=rank, reverse=True)[:MAX_CHILDREN] if depth < MAX_DEPTH else []
        pick = best(node) if on_path else None
        inner = tuple(copy(k, depth + 1, on_path and k is pick) for k in kids)
        base = describe(node, on_path)
        return PlanNode(base.label, base.chosen, base.visits, base.value, base.valid, inner)

    return copy(root, 0, True)
