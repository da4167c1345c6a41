"""A robot's hand and arm as the manipulation planners need them, read from a config file per robot
(config/manipulation/<robot>.yaml), never constants in the planners."""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.paths import config_dir


@dataclass(frozen=True)
class GripperSpec:
    """A parallel-jaw gripper. Grasp frame: x closes the fingers, y along a finger's width, z the
    approach; origin in the middle between the fingers, half a finger deep."""

    max_opening: float
    empty_gap: float
    finger_depth: float
    finger_width: float
    finger_thickness: float
    palm_depth: float
    palm_width: float
    clearance: float = 0.004
    palm_length: float = 0.0  # the hand's extent along the closing axis, if wider than the open fingers

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not (isinstance(value, (int, float)) and value >= 0.0 and value == value):
                raise ManipulationError("INVALID_CONFIG", f"gripper {f.name} must be a length in metres >= 0, got {value!r}")
        if self.max_opening <= self.empty_gap:
            raise ManipulationError("INVALID_CONFIG", "gripper max_opening must exceed empty_gap")
        if min(self.finger_depth, self.finger_width, self.finger_thickness) <= 0.0:
            raise ManipulationError("INVALID_CONFIG", "gripper fingers need a depth, width and thickness above 0")


@dataclass(frozen=True)
class ArmSpec:
    base: tuple[float, float, float]
    reach: float

    def within_reach(self, point: Any) -> bool:
        dx, dy, dz = (float(point[i]) - self.base[i] for i in range(3))
        return (dx * dx + dy * dy + dz * dz) ** 0.5 <= self.reach


@dataclass(frozen=True)
class RobotSpec:
    name: str
    gripper: GripperSpec
    arm: ArmSpec


def robot_spec_from_mapping(data: dict[str, Any], where: str = "robot spec") -> RobotSpec:
    try:
        gripper = GripperSpec(**{k: float(v) for k, v in dict(data["gripper"]).items()})
        arm = data.get("arm") or {}
        base = tuple(float(v) for v in arm.get("base", (0.0, 0.0, 0.0)))
        if len(base) != 3:
            raise ValueError("arm base needs x, y, z")
        return RobotSpec(str(data.get("robot", "robot")), gripper, ArmSpec(base, float(arm.get("reach", 1.0))))  # type: ignore[arg-type]
    except ManipulationError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise ManipulationError("INVALID_CONFIG", f"{where}: {e}") from e


def load_robot_spec(name_or_path: str = "panda") -> RobotSpec:
    """A robot by name (config/manipulation/<name>.yaml) or a YAML file's path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = config_dir() / "manipulation" / f"{name_or_path}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (config_dir() / "manipulation").glob("*.yaml"))
        raise ManipulationError("INVALID_CONFIG", f"no robot spec {name_or_path!r}; known: {', '.join(known)}")
    return robot_spec_from_mapping(yaml.safe_load(path.read_text(encoding="utf-8")) or {}, str(path))
