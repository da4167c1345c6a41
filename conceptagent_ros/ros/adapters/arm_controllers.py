"""VoxPoser's arm on ROS: waypoints out to a controller, the end effector and the objects read back.

Two controller interfaces, chosen by the voxposer node's `arm` parameter:

- `PoseTopicArm` ("pose_topic"): streams geometry_msgs/PoseStamped set-points at `control_rate`
  along the straight line to each waypoint, at the waypoint's speed -- what a Cartesian impedance
  controller takes (franka_example_controllers' equilibrium_pose, MoveIt Servo's pose tracking) --
  and reads the end effector back from a PoseStamped topic. The gripper command goes out as
  std_msgs/Float64 (0 open, 1 closed).
- `JointTrajectoryArm` ("follow_joint_trajectory"): solves each waypoint's joints with the arm's
  URDF (voxposer/kinematics.py) and sends a control_msgs/FollowJointTrajectory goal, timed from the
  waypoint's speed; the end effector is read from sensor_msgs/JointState through forward kinematics.
  control_msgs is not pip-installable: it is imported when this arm is built.

Both read the objects from the scene graph (perception's boxes, voxposer/box_scene.py). A missing
graph, pose or controller is a clear VoxPoserError("controller", ...), which stops the run.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64

from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.ros.adapters.base_pose import to_frame, to_root
from conceptagent_ros.ros.conversions.voxposer import boxes_from_graph, pose_stamped
from conceptagent_ros.voxposer.api import SceneSnapshot, VoxelGrid
from conceptagent_ros.voxposer.box_scene import snapshot_from_boxes
from conceptagent_ros.voxposer.executor import VoxPoserError

DOWN = (1.0, 0.0, 0.0, 0.0)  # tool pointing down (x, y, z, w)
POLL_SECONDS = 0.005


@dataclass(frozen=True)
class ArmLinkConfig:
    grid: VoxelGrid
    table_lower: tuple[float, float, float]
    table_upper: tuple[float, float, float]
    frame_id: str = "world"
    scene_graph_topic: str = "scene_graph"
    ee_pose_topic: str = "ee_pose"
    target_topic: str = "ee_target"
    gripper_topic: str = "gripper_command"
    joint_states_topic: str = "joint_states"
    base_speed: float = 0.25  # m/s at speed factor 1
    control_rate: float = 50.0  # set-points per second on the pose topic
    tolerance: float = 0.01  # m: a waypoint counts as reached within this
    settle_s: float = 2.0  # extra time a waypoint may take beyond its travel time
    wait_s: float = 5.0  # how long to wait for a first scene graph / pose
    home: tuple[float, float, float] = (0.45, 0.0, 0.35)


class _RosArm:
    """What both interfaces share: the latest scene graph and end-effector pose, and the gripper."""

    def __init__(self, node: Node, config: ArmLinkConfig, group: Any) -> None:
        self.node, self.config = node, config
        self._lock = threading.Lock()
        self._graph: SceneGraph | None = None
        self._ee: tuple[np.ndarray, np.ndarray] | None = None
        self.gripper_closed = 0.0
        latest = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        self._subscriptions = [node.create_subscription(SceneGraph, config.scene_graph_topic, self._on_graph, latest,
                                                        callback_group=group)]
        self._gripper_pub = node.create_publisher(Float64, config.gripper_topic, 10)

    def _on_graph(self, msg: SceneGraph) -> None:
        with self._lock:
            self._graph = msg

    def _set_ee(self, position: np.ndarray, quaternion: np.ndarray) -> None:
        with self._lock:
            self._ee = (position, quaternion)

    def _latest(self, read: Callable[[], Any], missing: str, hint: str) -> Any:
        """`read()` once it is not None, waiting up to wait_s; else a controller error saying what is missing."""
        deadline = time.monotonic() + self.config.wait_s
        while True:
            with self._lock:
                value = read()
            if value is not None:
                return value
            if time.monotonic() > deadline:
                raise VoxPoserError("controller", f"no {missing} within {self.config.wait_s:.0f} s{hint}")
            time.sleep(POLL_SECONDS * 4)

    def ee_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return self._latest(lambda: self._ee, "end-effector pose", f" ({self._pose_source()}): is the arm's driver running?")

    def _pose_source(self) -> str:
        return f"topic {self.config.ee_pose_topic}"

    def observe(self) -> SceneSnapshot:
        graph = self._latest(lambda: self._graph, f"scene graph on {self.config.scene_graph_topic}",
                             ": VoxPoser cannot see the objects")
        position, quaternion = self.ee_pose()
        c = self.config
        return snapshot_from_boxes(boxes_from_graph(graph), c.grid, tuple(position), tuple(quaternion),  # type: ignore[arg-type]
                                   self.gripper_closed, c.table_lower, c.table_upper)

    def _gripper(self, gripper: float | None) -> None:
        if gripper is not None and float(gripper >= 0.5) != self.gripper_closed:
            self.gripper_closed = float(gripper >= 0.5)
            self._gripper_pub.publish(Float64(data=self.gripper_closed))

    def reset_to_default_pose(self) -> None:
        self.move_to(np.asarray(self.config.home), np.asarray(DOWN), 1.0, None)

    def travel_s(self, distance: float, speed: float) -> float:
        return distance / (self.config.base_speed * float(np.clip(speed, 0.05, 4.0)))

    def move_to(self, position: np.ndarray, quaternion: np.ndarray | None = None, speed: float = 1.0,
                gripper: float | None = None) -> bool:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class PoseTopicArm(_RosArm):
    def __init__(self, node: Node, config: ArmLinkConfig, group: Any) -> None:
        super().__init__(node, config, group)
        self._target_pub = node.create_publisher(PoseStamped, config.target_topic, 10)
        self._subscriptions.append(node.create_subscription(PoseStamped, config.ee_pose_topic, self._on_pose,
                                                            QoSProfile(depth=1), callback_group=group))

    def _on_pose(self, msg: PoseStamped) -> None:
        p, o = msg.pose.position, msg.pose.orientation
        self._set_ee(np.array([p.x, p.y, p.z]), np.array([o.x, o.y, o.z, o.w]))

    def _send(self, position: np.ndarray, quaternion: np.ndarray) -> None:
        self._target_pub.publish(pose_stamped(position, quaternion, self.config.frame_id,
                                              self.node.get_clock().now().to_msg()))

    def move_to(self, position: np.ndarray, quaternion: np.ndarray | None = None, speed: float = 1.0,
                gripper: float | None = None) -> bool:
        self._gripper(gripper)
        goal = np.asarray(position, dtype=float)
        quat = np.asarray(DOWN if quaternion is None else quaternion, dtype=float)
        start, _ = self.ee_pose()
        duration = self.travel_s(float(np.linalg.norm(goal - start)), speed)
        steps = max(1, int(np.ceil(duration * self.config.control_rate)))
        began = time.monotonic()
        for n in range(1, steps + 1):  # the set-point moves at the asked speed
            self._send(start + (goal - start) * (n / steps), quat)
            delay = began + n / self.config.control_rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        deadline = time.monotonic() + self.config.settle_s
        while time.monotonic() < deadline:
            if np.linalg.norm(self.ee_pose()[0] - goal) <= self.config.tolerance:
                return True
            time.sleep(POLL_SECONDS)
        return False

    def stop(self) -> None:
        with self._lock:
            held = self._ee
        if held is not None:
            self._send(*held)  # the set-point jumps to where the arm is: it holds there


class JointTrajectoryArm(_RosArm):
    def __init__(self, node: Node, config: ArmLinkConfig, group: Any, action_name: str, kinematics: Any,
                 action_type: Any = None, client: Any = None, base: Any = None) -> None:
        """`base`: where the kinematics' root link stands in the planning frame (`.pose()`, e.g. a
        TfBasePose, for an arm on a mobile base); None: the root is the planning frame."""
        super().__init__(node, config, group)
        self.base = base
        if action_type is None:
            try:
                from control_msgs.action import FollowJointTrajectory
            except ImportError as exc:
                raise VoxPoserError("controller", "arm:=follow_joint_trajectory needs control_msgs "
                                                  f"(apt install ros-$ROS_DISTRO-control-msgs): {exc}") from None
            action_type = FollowJointTrajectory
        from conceptagent_ros.ros.action_client import ActionClient

        self.action_type = action_type
        self.kinematics = kinematics
        self.joint_names = list(kinematics.config.joint_names)
        self.client = client or ActionClient(node, action_type, action_name, callback_group=group)
        self._joints: np.ndarray | None = None
        self._goal: Any = None
        self._subscriptions.append(node.create_subscription(JointState, config.joint_states_topic, self._on_joints,
                                                            QoSProfile(depth=1), callback_group=group))

    def _pose_source(self) -> str:
        return f"joint states on {self.config.joint_states_topic}"

    def on_joint_state(self, names: list[str], positions: list[float]) -> None:
        """Joint positions in the URDF's order (a JointState may list more joints, in any order)."""
        index = {name: i for i, name in enumerate(names)}
        if all(name in index for name in self.joint_names):
            joints = np.array([positions[index[name]] for name in self.joint_names])
            with self._lock:
                self._joints = joints
            position, quaternion = self.kinematics.forward(joints)
            if self.base is not None:
                position, quaternion = to_frame(self.base.pose(), position, quaternion)
            self._set_ee(position, quaternion)

    def _on_joints(self, msg: JointState) -> None:
        self.on_joint_state(list(msg.name), list(msg.position))

    def move_to(self, position: np.ndarray, quaternion: np.ndarray | None = None, speed: float = 1.0,
                gripper: float | None = None) -> bool:
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        self._gripper(gripper)
        start, _ = self.ee_pose()
        with self._lock:
            seed = self._joints
        assert seed is not None  # ee_pose() returned, so joints arrived
        goal_position = np.asarray(position, dtype=float)
        goal_quaternion = np.asarray(DOWN if quaternion is None else quaternion, dtype=float)
        if self.base is not None:  # the target in the root's frame as the base stands now
            root_position, goal_quaternion = to_root(self.base.pose(), goal_position, goal_quaternion)
        else:
            root_position = goal_position
        joints = self.kinematics.inverse(root_position, goal_quaternion, seed)
        duration = max(0.05, self.travel_s(float(np.linalg.norm(goal_position - start)), speed))
        point = JointTrajectoryPoint(positions=[float(v) for v in joints], velocities=[0.0] * len(joints),
                                     time_from_start=Duration(sec=int(duration), nanosec=int(duration % 1 * 1e9)))
        goal = self.action_type.Goal()
        goal.trajectory = JointTrajectory(joint_names=self.joint_names, points=[point])
        if not self.client.wait_for_server(timeout_sec=self.config.wait_s):
            raise VoxPoserError("controller", "no FollowJointTrajectory server answers: is the arm's "
                                              "joint_trajectory_controller active?")
        answer = self.client.send_goal_reliably(goal, timeout=self.config.wait_s)
        if answer.handle is None:
            raise VoxPoserError("controller", f"the joint trajectory controller {answer.why_text()} a waypoint")
        handle = self._goal = answer.handle
        ended = self.client.get_result_reliably(handle, timeout=duration + self.config.settle_s)
        self._goal = None
        if ended.response is None:
            handle.cancel_goal_async()
            return False
        return int(getattr(ended.response.result, "error_code", 0)) == 0

    def stop(self) -> None:
        if self._goal is not None:
            self._goal.cancel_goal_async()  # the controller holds the arm where the canceled goal left it
