"""A real arm and gripper as the manipulation executors' Arm (manipulation/pick_executor.py).

- `GripperCommandGripper`: the hand through control_msgs/GripperCommand (what ros2_control's
  GripperActionController of gripper_controllers and most grippers' drivers serve), or, with
  `interface="parallel_gripper_command"`, control_msgs/ParallelGripperCommand (what Jazzy's
  parallel_gripper_action_controller serves, which replaces the deprecated GripperActionController:
  the goal is a JointState of the gripper's joint, the result the state it stopped in). Closing
  sends position 0 at `max_effort` and reads the gap the fingers stopped at from the result, which
  is what the pick executor's "is something held" check needs. control_msgs is not
  pip-installable: it is imported when the gripper is built, and tests pass a stand-in type with
  the same fields.
- `RosHand`: moves the hand frame (manipulation/hand_frame.py) with any of the arm adapters of
  ros/adapters/arm_controllers.py (Cartesian set-points on a pose topic, or FollowJointTrajectory),
  turning it into the arm's tool link by the arm's `tool_axes` and `tool_offset`.

A controller that does not answer is a ControllerUnavailable naming the action, not a hang.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.manipulation.hand_frame import parse_tool_axes, tool_rotation


class ControllerUnavailable(ConceptAgentError):
    """The arm's or gripper's controller did not answer."""


@dataclass(frozen=True)
class GripperConfig:
    action: str = "gripper_controller/gripper_cmd"
    open_gap: float = 0.08  # metres between the fingers, open
    max_effort: float = 40.0  # newtons, closing on a thing
    # the controller's position for a gap of 1 m: 1.0 where position is the gap, 0.5 where it is one
    # finger's joint of a symmetric hand (the Panda's panda_finger_joint1)
    position_per_gap: float = 1.0
    wait_s: float = 5.0  # for the server
    motion_s: float = 10.0  # for one open or close
    interface: str = "gripper_command"  # or "parallel_gripper_command"
    joint: str = ""  # the gripper's joint, named in a ParallelGripperCommand goal


INTERFACES = {"gripper_command": "GripperCommand", "parallel_gripper_command": "ParallelGripperCommand"}


class GripperCommandGripper:
    def __init__(self, node: Any, config: GripperConfig = GripperConfig(), group: Any = None,
                 action_type: Any = None, client: Any = None):
        if config.interface not in INTERFACES:
            raise ControllerUnavailable(f"gripper.interface {config.interface!r}: use one of {', '.join(INTERFACES)}")
        if config.interface == "parallel_gripper_command" and not config.joint:
            raise ControllerUnavailable("gripper.interface parallel_gripper_command needs gripper.joint (the joint "
                                        "its controller drives)")
        if action_type is None:
            name = INTERFACES[config.interface]
            try:
                import control_msgs.action as actions

                action_type = getattr(actions, name)
            except (ImportError, AttributeError) as exc:
                raise ControllerUnavailable(f"the {name} gripper needs control_msgs "
                                            f"(apt install ros-$ROS_DISTRO-control-msgs): {exc}") from None
        self.action_type, self.config = action_type, config
        if client is None:
            from conceptagent_ros.ros.action_client import ActionClient

            client = ActionClient(node, action_type, config.action, callback_group=group)
        self.client = client
        self.gap = config.open_gap
        self.stalled: bool | None = None

    def _command(self, gap: float, effort: float) -> float:
        c = self.config
        if not self.client.wait_for_server(timeout_sec=c.wait_s):
            raise ControllerUnavailable(f"no {INTERFACES[c.interface]} server answers on {c.action}: is the "
                                        "gripper's controller running?")
        goal = self.action_type.Goal()
        if c.interface == "parallel_gripper_command":
            from sensor_msgs.msg import JointState

            goal.command = JointState(name=[c.joint], position=[float(gap * c.position_per_gap)],
                                      effort=[float(effort)])
        else:
            goal.command.position = float(gap * c.position_per_gap)
            goal.command.max_effort = float(effort)
        answer = self.client.send_goal_reliably(goal, timeout=c.wait_s)
        if answer.handle is None:
            raise ControllerUnavailable(f"the gripper on {c.action} {answer.why_text()} the command")
        ended = self.client.get_result_reliably(answer.handle, timeout=c.motion_s)
        if ended.response is None:
            answer.handle.cancel_goal_async()
            raise ControllerUnavailable(f"the gripper on {c.action} did not finish within {c.motion_s:.0f} s")
        # where the fingers stopped: on the thing (stalled), or at the goal
        result = ended.response.result
        stopped = result.state.position[0] if c.interface == "parallel_gripper_command" else result.position
        self.gap = float(stopped) / c.position_per_gap
        # both results say whether the fingers stalled on something short of the goal
        self.stalled = bool(result.stalled) if hasattr(result, "stalled") else None
        return self.gap

    def open(self) -> float:
        return self._command(self.config.open_gap, self.config.max_effort)

    def close(self) -> float:
        return self._command(0.0, self.config.max_effort)


class CartesianArm(Protocol):
    """What RosHand needs of an arm adapter (arm_controllers.PoseTopicArm, JointTrajectoryArm)."""

    def move_to(self, position: np.ndarray, quaternion: np.ndarray | None = None, speed: float = 1.0,
                gripper: float | None = None) -> bool: ...


class Gripper(Protocol):
    gap: float
    stalled: bool | None  # the last command's fingers stopped on something (None: the gripper does not say)

    def open(self) -> float: ...

    def close(self) -> float: ...


@dataclass
class RosHand:
    """The Arm protocol on a real arm: `tool_axes` says how the arm's tool link sits on the hand
    frame (the Panda's grasp target: ("-y", "x", "z")), `tool_offset` how far along the approach
    the tool link lies beyond the hand frame's origin."""

    arm: CartesianArm
    gripper: Gripper
    tool_axes: tuple[str, str, str] = ("-y", "x", "z")
    tool_offset: float = 0.02

    def __post_init__(self) -> None:
        self._axes = parse_tool_axes(self.tool_axes)

    def move_hand(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        target = np.asarray(position, dtype=float) + np.asarray(rotation)[:, 2] * self.tool_offset
        quaternion = Rotation.from_matrix(tool_rotation(rotation, self._axes)).as_quat()
        return bool(self.arm.move_to(target, quaternion, speed))

    def open_hand(self) -> None:
        self.gripper.open()

    def close_hand(self) -> float:
        return self.gripper.close()

    def finger_gap(self) -> float:
        return self.gripper.gap

    def fingers_feel(self) -> bool | None:
        """The gripper's own word: its last close stalled on something (GripperCommand's and
        ParallelGripperCommand's `stalled`), None where it gives none."""
        return self.gripper.stalled
