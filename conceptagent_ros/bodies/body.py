"""The Body: what the planner's loop drives (a RobotInterface), the truth a judge reads, and what a
node serves of a physical body. Callers use these and never a body's class or its internals."""
from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conceptagent_ros.planning.robot import RobotInterface
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome


@dataclass
class Body:
    """`senses`: what observe and execute go through (the body itself, or its images fused by the
    perception pipeline first); `judged_state`: the atoms that hold in the body's world now, read
    from the simulator, never from what the body perceived; `physical`: the PyBullet body a node
    serves (its skills, execute with a watch), None for the symbolic world; `mobile`: a mobile base
    in a house, whose description, joint states, base pose, path and camera images a node publishes;
    `symbolic_predicates`: the predicates a physical body's judge does not read from its simulator
    (their atoms in `judged_state` are the declared effects of skills it has no physical model of),
    so a goal that needs one is reported apart from the physical figures."""

    kind: str  # symbolic | tabletop | household
    senses: RobotInterface
    judged_state: Callable[[], SymbolicState]
    physical: Any = None
    mobile: bool = False
    symbolic_predicates: frozenset[str] = frozenset()

    def observe(self) -> Observation:
        return self.senses.observe()

    def execute(self, call: SkillCall) -> SkillOutcome:
        return self.senses.execute(call)

    def picture(self, path: Path, title: str = "", goal_objects: Collection[str] = ()) -> Path | None:
        """The task from above (a household body's path and where every thing stands); None where the
        body draws none."""
        top_view = getattr(self.physical, "top_view", None)
        return top_view(path, title=title, goal_objects=goal_objects) if top_view is not None else None

    def symbolic_part(self, predicates: Collection[str]) -> list[str]:
        """Which of `predicates` (a goal's) this body judges on its flags, not on physics."""
        return sorted(set(predicates) & self.symbolic_predicates)

    def close(self) -> None:
        if self.physical is not None:
            self.physical.close()
