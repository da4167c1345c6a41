"""What the agent loop and the planners read of the robot's belief, as a Protocol: the household's
scene graph (scene/graph.py) is one; a world known fact by fact, like a benchmark's PDDL task
(evaluation/eai_virtualhome/adapter.py), is another."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from conceptagent_ros.scene.symbolic import SymbolicState


class Thing(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def category(self) -> str: ...


class Belief(Protocol):
    @property
    def objects(self) -> Mapping[str, Thing]: ...

    def integrate(self, observation: Any, step: int = 0) -> list[str]:
        """Fold in what the robot observed; the ids seen for the first time."""
        ...

    def symbolic_state(self) -> SymbolicState: ...

    def describe(self) -> str:
        """The state in words, as an LLM reads it."""
        ...

    def unvisited_rooms(self) -> list[str]:
        """The map's rooms the robot has not been in (where to look for what it has not seen)."""
        ...

    def frontier_size(self) -> int:
        """How much is left to explore (planners scale their re-plan limits with it)."""
        ...

    def near_hint(self, atom: tuple[str, ...], value: bool) -> str | None:
        """Extra words for a verdict on an atom (a distance behind `near`), or None."""
        ...
