"""VoxPoser as a ROS 2 action: an instruction in, an end-effector trajectory executed in closed loop.

Each goal runs voxposer/executor.py: the language-model programs (offline composer or an
OpenAI-compatible server) compose value maps in the sandbox, a planner turns them into a path, and
every ~2 cm the maps are re-evaluated against a fresh observation and the path replanned. One goal
at a time (a second is refused with BUSY); a cancel stops the arm where it is.

Action:      voxposer/synthesize_trajectory (conceptagent_ros/SynthesizeTrajectory), feedback per waypoint
Publishes:   voxposer/planned_path (nav_msgs/Path)          the latest replan's path
             voxposer/executed_path (nav_msgs/Path)         the waypoints sent so far in this goal
             voxposer/maps/<kind> (sensor_msgs/PointCloud2) affordance, avoidance, velocity, gripper maps,
                                                            value in `intensity`, at most every maps.period s
Arm (parameter `arm`):
  sim                      a PyBullet Franka tabletop in this process (a fresh one per goal: the blocks
                           and lines the instruction names, or sim.template's scene with sim.seed)
  pose_topic               PoseStamped set-points on ee_target_topic, pose read back on ee_pose_topic,
                           gripper on gripper_topic (std_msgs/Float64), objects from scene_graph_topic
  follow_joint_trajectory  control_msgs/FollowJointTrajectory goals on fjt.action (joints from the URDF's
                           inverse kinematics), joint states on joint_states_topic
Parameters:  llm (offline), planner (fast | reference), frame_id (world), sim.template (0: from the
             instruction), sim.seed, sim.gui, workspace.lower/upper, table.lower/upper, base_speed (m/s),
             control_rate (Hz), home ([x, y, z]), maps.publish, maps.period, maps.max_points,
             fjt.action, fjt.urdf, fjt.ee_link, fjt.joint_names
"""
from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
from nav_msgs.msg import Path
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import PointCloud2

from conceptagent_ros.action import SynthesizeTrajectory
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.ros.action_server import ActionServer
from conceptagent_ros.ros.conversions.voxposer import MAP_BACKGROUND, path_msg, pose_stamped, value_map_cloud
from conceptagent_ros.ros.node_teardown import DestroysItsActions
from conceptagent_ros.ros.spin import run_node
from conceptagent_ros.voxposer.api import WORKER_RUNNER, SceneSnapshot, VoxelGrid
from conceptagent_ros.voxposer.executor import ReplanRecord, RunReport, VoxPoser, VoxPoserOptions, Waypoint
from conceptagent_ros.voxposer.lmps import ProgramBook
from conceptagent_ros.voxposer.planners import PLANNERS
from conceptagent_ros.voxposer.sandbox import Sandbox
from conceptagent_ros.voxposer.session import make_writer, program_cache, scene_for
from conceptagent_ros.voxposer.tabletop import TABLE_LOWER, TABLE_UPPER, WORKSPACE_LOWER, WORKSPACE_UPPER

Result = SynthesizeTrajectory.Result
ARMS = ("sim", "pose_topic", "follow_joint_trajectory")
ERROR_CODES = {
    "bad_input": Result.INVALID_INSTRUCTION, "not_understood": Result.INVALID_INSTRUCTION,
    "rejected": Result.PROGRAM_FAILED, "raised": Result.PROGRAM_FAILED, "timeout": Result.PROGRAM_FAILED,
    "memory": Result.PROGRAM_FAILED, "crashed": Result.PROGRAM_FAILED, "bad_result": Result.PROGRAM_FAILED,
    "need_program": Result.PROGRAM_FAILED, "not_reached": Result.NOT_REACHED, "unsupported": Result.UNSUPPORTED,
    "controller": Result.CONTROLLER_FAILED,
}


def result_from_report(report: RunReport, frame: str, stamp: Any) -> Any:
    result = Result(success=report.success, error_msg=report.message, replans=len(report.replans),
                    replan_hz=float(report.replan_hz), programs=list(report.programs))
    if report.canceled:
        result.error_code = Result.CANCELED
    elif not report.success:
        result.error_code = ERROR_CODES.get(report.error_kind, Result.PROGRAM_FAILED)
    result.trajectory = waypoints_path(report.waypoints, frame, stamp)
    return result


def waypoints_path(waypoints: list[Waypoint], frame: str, stamp: Any) -> Path:
    if not waypoints:
        return path_msg(np.zeros((0, 3)), np.zeros((0, 4)), frame, stamp)
    return path_msg(np.array([w.position for w in waypoints]), np.array([w.quaternion for w in waypoints]), frame, stamp)


class VoxPoserNode(DestroysItsActions, Node):
    __doc__ = __doc__

    def __init__(self, node_name: str = "voxposer", namespace: str = "", **kwargs: Any) -> None:
        super().__init__(node_name, namespace=namespace, **kwargs)
        d = ParameterDescriptor
        declare = self.declare_parameter
        self.arm_kind = declare("arm", "sim", d(description=f"one of {', '.join(ARMS)}")).value
        if self.arm_kind not in ARMS:
            raise ConceptAgentError(f"parameter arm: {self.arm_kind!r} is not one of {', '.join(ARMS)}")
        self.llm = declare("llm", "offline", d(description="offline or openai:MODEL")).value
        self.planner = declare("planner", "fast", d(description="fast or reference")).value
        if self.planner not in PLANNERS:
            raise ConceptAgentError(f"parameter planner: {self.planner!r} is not one of {', '.join(PLANNERS)}")
        self.frame = declare("frame_id", "world", d(description="frame of paths and maps")).value
        declare("sim.template", 0, d(description="tabletop task template 1..13; 0: the instruction's blocks"))
        declare("sim.seed", 0, d(description="seed of the tabletop scene"))
        declare("sim.gui", False, d(description="show PyBullet's window"))
        lower = declare("workspace.lower", list(WORKSPACE_LOWER), d(description="value-map bounds, m")).value
        upper = declare("workspace.upper", list(WORKSPACE_UPPER), d(description="value-map bounds, m")).value
        self.grid = VoxelGrid(tuple(lower), tuple(upper), 100)  # type: ignore[arg-type]
        self.table_lower = tuple(declare("table.lower", list(TABLE_LOWER), d(description="table top, m")).value)
        self.table_upper = tuple(declare("table.upper", list(TABLE_UPPER), d(description="table top, m")).value)
        self.publish_maps = declare("maps.publish", True, d(description="publish value maps")).value
        self.maps_period = declare("maps.period", 0.5, d(description="seconds between map clouds")).value
        self.maps_max_points = declare("maps.max_points", 100_000, d(description="points per map cloud")).value
        self._writer = make_writer(self.llm)  # a bad llm spec fails here, at start-up
        group = ReentrantCallbackGroup()
        self.arm = self._make_arm(group) if self.arm_kind != "sim" else None
        self.sandbox = Sandbox(WORKER_RUNNER)
        self._busy = threading.Lock()
        self.planned_pub = self.create_publisher(Path, "voxposer/planned_path", 1)
        self.executed_pub = self.create_publisher(Path, "voxposer/executed_path", 1)
        self.map_pubs = {kind: self.create_publisher(PointCloud2, f"voxposer/maps/{kind}", 1) for kind in MAP_BACKGROUND}
        self._last_maps = 0.0
        self.server = ActionServer(self, SynthesizeTrajectory, "voxposer/synthesize_trajectory", self._execute,
                                   goal_callback=lambda _g: GoalResponse.ACCEPT,
                                   cancel_callback=lambda _h: CancelResponse.ACCEPT, callback_group=group)
        self.get_logger().info(f"voxposer: arm {self.arm_kind}, planner {self.planner}, llm {self.llm}")

    def _make_arm(self, group: Any) -> Any:
        from conceptagent_ros.ros.adapters.arm_controllers import ArmLinkConfig, JointTrajectoryArm, PoseTopicArm

        d, declare = ParameterDescriptor, self.declare_parameter
        config = ArmLinkConfig(
            self.grid, self.table_lower, self.table_upper, self.frame,  # type: ignore[arg-type]
            scene_graph_topic=declare("scene_graph_topic", "scene_graph", d(description="objects")).value,
            ee_pose_topic=declare("ee_pose_topic", "ee_pose", d(description="end-effector pose")).value,
            target_topic=declare("ee_target_topic", "ee_target", d(description="pose set-points")).value,
            gripper_topic=declare("gripper_topic", "gripper_command", d(description="0 open, 1 closed")).value,
            joint_states_topic=declare("joint_states_topic", "joint_states", d(description="joints")).value,
            base_speed=declare("base_speed", 0.25, d(description="m/s at speed factor 1")).value,
            control_rate=declare("control_rate", 50.0, d(description="set-points per second")).value,
            home=tuple(declare("home", [0.45, 0.0, 0.35], d(description="reset pose, m")).value))  # type: ignore[arg-type]
        urdf = declare("fjt.urdf", "franka_panda/panda.urdf", d(description="the arm's URDF")).value
        ee_link = declare("fjt.ee_link", "panda_grasptarget", d(description="tool link")).value
        joints = declare("fjt.joint_names", [f"panda_joint{i}" for i in range(1, 8)], d(description="arm joints")).value
        action = declare("fjt.action", "/joint_trajectory_controller/follow_joint_trajectory",
                         d(description="FollowJointTrajectory action")).value
        if self.arm_kind == "pose_topic":
            return PoseTopicArm(self, config, group)
        from conceptagent_ros.voxposer.kinematics import KinematicsConfig, PybulletKinematics

        kinematics = PybulletKinematics(KinematicsConfig(urdf, ee_link, tuple(joints)))
        try:
            return JointTrajectoryArm(self, config, group, action, kinematics)
        except Exception:
            kinematics.close()
            raise

    # -- one goal -----------------------------------------------------------------------------------
    def _execute(self, goal_handle: Any) -> Any:
        if not self._busy.acquire(blocking=False):
            goal_handle.abort()
            return Result(success=False, error_code=Result.BUSY,
                          error_msg="another instruction is running; cancel it first")
        judged: tuple[bool, str] | None = None
        try:
            report, judged = self._run(goal_handle)
        except ConceptAgentError as exc:  # e.g. an instruction naming a block the tabletop has no colour for
            report = RunReport(goal_handle.request.instruction, message=str(exc), error_kind="bad_input")
        finally:
            self._busy.release()
        result = result_from_report(report, self.frame, self.get_clock().now().to_msg())
        if judged is not None:
            result.judge = Result.JUDGE_PASSED if judged[0] else Result.JUDGE_FAILED
            result.judge_verdict = judged[1]
        if report.success:
            goal_handle.succeed()
        elif report.canceled:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        self.get_logger().info(f"'{report.instruction}': {report.message}")
        return result

    def _run(self, goal_handle: Any) -> tuple[RunReport, tuple[bool, str] | None]:
        """The goal's run and, on the simulated arm for its template's own instruction, the judge's verdict."""
        request = goal_handle.request
        planner = request.planner or self.planner
        if planner not in PLANNERS:
            return RunReport(request.instruction, message=f"unknown planner {planner!r} (fast or reference)",
                             error_kind="bad_input"), None
        waypoints: list[Waypoint] = []

        def on_waypoint(waypoint: Waypoint, index: int) -> None:
            waypoints.append(waypoint)
            now = self.get_clock().now().to_msg()
            goal_handle.publish_feedback(SynthesizeTrajectory.Feedback(
                waypoint_index=index, waypoint=pose_stamped(waypoint.position, waypoint.quaternion, self.frame, now),
                speed=float(waypoint.speed), gripper=float(waypoint.gripper)))
            self.executed_pub.publish(waypoints_path(waypoints, self.frame, now))

        def on_replan(record: ReplanRecord, maps: dict[str, np.ndarray], snapshot: SceneSnapshot) -> None:
            now = self.get_clock().now().to_msg()
            grid = snapshot.grid
            positions = grid.to_world(np.asarray(record.path))
            self.planned_pub.publish(path_msg(positions, np.tile([1.0, 0.0, 0.0, 0.0], (len(positions), 1)),
                                              self.frame, now))
            if self.publish_maps and time.monotonic() - self._last_maps >= self.maps_period:
                self._last_maps = time.monotonic()
                for kind, values in maps.items():
                    if kind in self.map_pubs:
                        self.map_pubs[kind].publish(value_map_cloud(kind, values, grid, self.frame, now,
                                                                    self.maps_max_points))

        def run(env: Any) -> RunReport:
            book = ProgramBook(self._writer, program_cache())
            agent = VoxPoser(env, book, self.sandbox, PLANNERS[planner](), VoxPoserOptions(),
                             should_stop=lambda: goal_handle.is_cancel_requested)
            agent.on_waypoint, agent.on_replan = on_waypoint, on_replan
            return agent.run(request.instruction)

        if self.arm is not None:
            return run(self.arm), None
        from conceptagent_ros.voxposer.tabletop import Tabletop

        template = int(self.get_parameter("sim.template").value)
        scene, judge = scene_for(request.instruction, template or None, int(self.get_parameter("sim.seed").value))
        with Tabletop(scene, gui=bool(self.get_parameter("sim.gui").value)) as env:
            report = run(env)
            return report, judge(env) if judge is not None else None

    def destroy_node(self) -> None:
        self.sandbox.close()
        if self.arm is not None and hasattr(self.arm, "kinematics"):
            self.arm.kinematics.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    run_node(VoxPoserNode, threads=4, args=args)


if __name__ == "__main__":
    main()
