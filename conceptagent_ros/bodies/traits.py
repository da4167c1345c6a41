"""What the PyBullet body of a scene is, known without building it: a launch file or a bring-up sets
its nodes from this (make_body builds the body itself). Light on purpose: a launch file imports it,
and a launch imports nothing it does not need (test/test_bringup_checks.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conceptagent_ros.scene.model import Scene


@dataclass(frozen=True)
class PhysicalBodyTraits:
    """`mobile`: a mobile base in a house (conceptagent_mm), whose camera's images go to perception and
    whose base pose and path a node publishes; otherwise the Panda at its table."""

    mobile: bool

    def skills(self) -> tuple[str, ...]:
        """The skills the body serves (imported here, when asked: the bodies' modules are heavy)."""
        if self.mobile:
            from conceptagent_ros.bodies.household.body import HouseholdBody

            return tuple(HouseholdBody.SKILLS)
        from conceptagent_ros.manipulation.arm_skills import SKILLS

        return tuple(SKILLS)


def physical_body_traits(scene: Scene) -> PhysicalBodyTraits:
    return PhysicalBodyTraits(mobile=scene.setting == "household")
