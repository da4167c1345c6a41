"""The one seam between the task loop and a robot: the embedded world (sim/), the perceiving robot,
or ROS skill servers and perception (ros/robot_client.py) all implement it."""
from __future__ import annotations

from typing import Protocol

from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome


class RobotInterface(Protocol):
    """What the agent needs from a robot: the embedded world, or ROS skill servers and perception."""

    def observe(self) -> Observation: ...

    def execute(self, call: SkillCall) -> SkillOutcome: ...
