"""The project's mobile manipulator (description/conceptagent_mm.urdf.xacro), expanded to URDF with
xacro's own Python API, for Gazebo (robot_state_publisher, ros_gz_sim's create), PyBullet and rviz."""
from __future__ import annotations

from pathlib import Path

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.paths import description_dir

ROBOT = "conceptagent_mm"
ARM_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
              "wrist_3_joint")
GRIPPER_JOINT = "left_finger_joint"
TORSO_JOINT = "torso_lift_joint"
TORSO_TRAVEL = 0.35  # metres the torso lifts the mast (the arm and the camera) at most: the description's limit
GRASP_LINK = "grasp_link"
FOOTPRINT_RADIUS = 0.22  # the base's radius: Nav2's robot_radius and the map checks read it from here


def xacro_path() -> Path:
    return description_dir() / f"{ROBOT}.urdf.xacro"


def robot_urdf(controllers_file: str = "", gazebo: bool = True, torso_fixed: bool = False) -> str:
    """The expanded URDF text. `controllers_file`: the ros2_control parameters for gz_ros2_control
    (none: no ros2_control block); `gazebo`: the gz sensor, diff-drive and joint-state plugins;
    `torso_fixed`: the torso lift a fixed joint at its lowest (a kinematic copy of the arm)."""
    try:
        import xacro
    except ImportError as e:  # pragma: no cover - xacro is a dependency of the package
        raise ConfigError("expanding the robot description needs xacro: pip install xacro") from e
    document = xacro.process_file(str(xacro_path()), mappings={"controllers_file": controllers_file,
                                                                "gazebo": "true" if gazebo else "false",
                                                                "torso_fixed": "true" if torso_fixed else "false"})
    return document.toprettyxml(indent="  ")
