"""Manipulation skill servers: pick, place, open and close planned from perceived points and carried
out on an arm, behind the ExecuteSkill contract every skill server speaks.

The work is the core's (manipulation/arm_skills.py: the planners and executors as skills), on a
body: the PyBullet Panda with its cameras (bodies/tabletop/tabletop_body.py), or a real arm seen through
the perception node and moved through its controllers (ros/adapters/arm_body.py); this node only
serves it. By default it serves
`manipulation/<skill>`, where robot_skills_node forwards pick / place / open / close. As the whole
robot of a table-top arm (`conceptagent ros up --body pybullet`, `make manipulation-demo`) it
serves `skills/<skill>` itself, navigate_to included (the arm reaches its whole table), and
publishes the scene graph its cameras see. As the whole robot in a household (`conceptagent ros up
--scene S --body pybullet`, `make body-demo`) it serves every skill, and with perception camera its
mast camera's images go to the perception node and the scene graph node builds the planner's graph,
as on a real robot (ros/body_camera.py).

Feedback: one message per phase (looking, planning, picking, putting down, measuring) and per arm
motion, with the fraction done. Cancel: the arm stops before its next motion and the goal ends
CANCELED. One skill at a time: a goal sent while another runs is aborted with "busy". Failures
carry the manipulation code in error_msg (`pick(duck_1) failed: SLIPPED: ...`) and PHYSICAL_FAILURE
(or PRECONDITION_FAILED, SERVER_UNAVAILABLE for a skill the arm has no executor for).

Actions:     <action_prefix>/<skill> (conceptagent_ros/ExecuteSkill), for each of skills
Publishes:   with perception camera (household): the camera topics of ros/camera_streams.py (rgb, depth,
             camera_info, pose, instances, instance_names), every image the body takes, each waited on
             until perceived_graph says it is fused
Calls:       with perception camera: record_skill_outcome (conceptagent_ros/RecordSkillOutcome) as each
             skill ends, before its result
Publishes:   grasp_markers (visualization_msgs/MarkerArray): the last grasp plan's candidates and
             the grasp taken; with publish_scene_graph: scene_graph (conceptagent_ros/SceneGraph)
             after every skill (stamped after its `finished`) and at publish_rate while idle; with a
             household body, for rviz: robot_description (std_msgs/String, latched), joint_states
             (sensor_msgs/JointState), robot_pose (geometry_msgs/PoseStamped) and path (nav_msgs/Path,
             latched: the base's last planned path), after every skill and at publish_rate while
             idle, and map -> base_footprint on TF where tf2_ros is installed
Services:    with publish_scene_graph: get_scene_graph (conceptagent_ros/GetSceneGraph)
Parameters:  body (string, pybullet): pybullet, the Panda at the PyBullet tabletop the scene lays out,
             seen by its own cameras, or in a household scene conceptagent_mm in the world the scene
             exports (bodies/household/body.py: every skill of the library, navigate_to driving the
             base; those with no physical model by their effects); arm, a real arm (below); robot (string, panda): the hand and
             arm description config/manipulation/<robot>.yaml; skills (string[], [pick, place, open,
             close]); action_prefix (string, manipulation); frame_id (string, world)
             body=pybullet: scene (string, tabletop); seed (int, 0); gui (bool, false);
             publish_scene_graph (bool, false); publish_rate (double, 1.0 Hz); in a household scene
             perception (string, body): body (the body's own view, published as scene_graph with
             publish_scene_graph) or camera (its images to the perception node, above);
             frame_timeout (double, 2.0 s): the longest wait for one image to be fused
             body=arm (ros/adapters/arm_body.py): points_service (perception/get_object_points);
             arm.kind (pose_topic | follow_joint_trajectory), arm.ee_pose_topic, arm.ee_target_topic,
             arm.joint_states_topic, arm.fjt_action, arm.base_speed, arm.control_rate, arm.home,
             arm.base_frame (string, ""): on a mobile base, the kinematics' root link (base_footprint),
             looked up on TF in frame_id whenever a target becomes joints or joints a pose;
             kinematics.urdf, kinematics.ee_link, kinematics.joint_names, kinematics.home_joints (the
             reach check); gripper.action, gripper.interface (gripper_command: control_msgs/GripperCommand |
             parallel_gripper_command: control_msgs/ParallelGripperCommand), gripper.joint, gripper.open_gap,
             gripper.max_effort, gripper.position_per_gap; hand.tool_axes, hand.tool_offset (how the
             tool link sits on the hand frame). config/ros/manipulation_panda.yaml has the Panda's.
"""
from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Path
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.ros.action_server import ActionServer
from conceptagent_ros.ros.conversions.body import base_path_msg, base_pose_msg, joint_state_msg
from conceptagent_ros.ros.conversions.manipulation import grasp_markers
from conceptagent_ros.ros.conversions.scene import graph_to_msg
from conceptagent_ros.ros.conversions.skills import call_from_msg, end_goal, outcome_to_result
from conceptagent_ros.ros.node_teardown import DestroysItsActions
from conceptagent_ros.ros.spin import run_node
from conceptagent_ros.skills.contract import SkillOutcome
from conceptagent_ros.srv import GetSceneGraph

BODIES = ("pybullet", "arm")
CANCEL_POLL_SECONDS = 0.02


class ManipulationNode(DestroysItsActions, Node):
    __doc__ = __doc__

    def __init__(self, node_name: str = "manipulation", namespace: str = "", gripper_client: Any = None,
                 gripper_action_type: Any = None, tf_buffer: Any = None, **kwargs: Any):
        """`gripper_client` / `gripper_action_type`: a stand-in GripperCommand client and type (tests;
        control_msgs is imported otherwise); `tf_buffer`: a stand-in of tf2_ros.Buffer for arm.base_frame."""
        self._tf_buffer = tf_buffer
        super().__init__(node_name, namespace=namespace, **kwargs)
        d = ParameterDescriptor
        self.declare_parameter("body", "pybullet", d(description="pybullet (the Panda at the PyBullet tabletop) or "
                                                                 "arm (a real arm through its controllers)"))
        self.declare_parameter("robot", "panda", d(description="config/manipulation/<robot>.yaml: hand and arm"))
        self.declare_parameter("skills", ["pick", "place", "open", "close"], d(description="skills served"))
        self.declare_parameter("action_prefix", "manipulation", d(description="actions are <prefix>/<skill>"))
        self.declare_parameter("frame_id", "world", d(description="frame of the arm's base"))
        kind = self.get_parameter("body").value
        if kind not in BODIES:
            raise ConceptAgentError(f"manipulation node: body {kind!r} is not one of {', '.join(BODIES)}")
        self.frame = self.get_parameter("frame_id").value
        self._lock = threading.Lock()  # PyBullet is not thread-safe: one skill or one look at a time
        self._skill = threading.Lock()  # held while a skill runs: a second skill is refused, not queued
        group = ReentrantCallbackGroup()
        self.graph_pub = None
        self.camera: Any = None  # a household body's camera to the perception node (perception camera)
        self.looked = True  # its first look around is through (perception camera: once perception is up)
        self.joint_state_pub = None  # a mobile body's state for rviz (_body_state_publishers)
        self.mobile = False  # a mobile base in a house (bodies/body.py): its state is published too
        self._path_sent: list[tuple[float, float]] = []
        self.body: Any = None
        if kind == "pybullet":
            self._pybullet_body(group)
        else:
            self._arm_body(group, gripper_client, gripper_action_type)
        from conceptagent_ros.manipulation.arm_skills import SKILLS

        # a household body does every skill of the library (those without a physical model by their
        # effects); an arm, its own
        served = getattr(self.body, "SKILLS", SKILLS)
        skills = list(self.get_parameter("skills").value)
        unknown = [s for s in skills if s not in served]
        if unknown:
            self.destroy_body()
            raise ConceptAgentError(f"manipulation node: no executor for {', '.join(unknown)}; it serves "
                                    f"{', '.join(served)}")
        prefix = self.get_parameter("action_prefix").value.strip("/")
        self.servers = [ActionServer(self, ExecuteSkill, f"{prefix}/{skill}",
                                     execute_callback=lambda handle, s=skill: self._execute(handle, s),
                                     goal_callback=lambda _g: GoalResponse.ACCEPT,
                                     cancel_callback=lambda _h: CancelResponse.ACCEPT, callback_group=group)
                        for skill in skills]
        self.markers_pub = self.create_publisher(MarkerArray, "grasp_markers", 1)
        self.get_logger().info(f"manipulation: {kind} arm, serving {', '.join(f'{prefix}/{s}' for s in skills)}")

    def _pybullet_body(self, group: Any) -> None:
        """A body in PyBullet for the scene (bodies/factory.make_body): the arm at the tabletop the scene
        lays out, or conceptagent_mm in a household's exported world, seen by its own cameras."""
        d = ParameterDescriptor
        self.declare_parameter("scene", "tabletop", d(description="built-in scene name or scene YAML path"))
        self.declare_parameter("seed", 0, d(description="seed of the things' poses (0: the scene file's)"))
        self.declare_parameter("gui", False, d(description="open PyBullet's window"))
        self.declare_parameter("sensing", "", d(description="the body's senses: ideal or realistic (RGB-D noise, "
                                                            "localization); empty: the body's own (bodies/sensing.py)"))
        self.declare_parameter("publish_scene_graph", False, d(description="publish what the cameras see"))
        self.declare_parameter("publish_rate", 1.0, d(description="scene graph rate while idle, Hz",
                                                      floating_point_range=[FloatingPointRange(from_value=0.05,
                                                                                               to_value=10.0)]))
        from conceptagent_ros.bodies.factory import make_body
        from conceptagent_ros.scene.loader import load_scene

        self.scene = load_scene(self.get_parameter("scene").value)
        seed, gui = self.get_parameter("seed").value, self.get_parameter("gui").value
        # a mobile body's images go to the perception node with perception camera; its first look
        # waits for that node (_household_perception)
        mode = self.declare_parameter("perception", "body", ParameterDescriptor(
            description="a mobile body's view: body (its own) or camera (its images to the perception node)")).value
        if mode not in ("body", "camera"):
            raise ConceptAgentError(f"manipulation node: perception must be body or camera, not {mode!r}")
        try:
            made = make_body(self.scene, "pybullet", "external" if mode == "camera" else "truth", seed=seed, gui=gui,
                             arm=self.get_parameter("robot").value, sensing=self.get_parameter("sensing").value or None)
        except ValueError as e:
            raise ConceptAgentError(f"manipulation node: {e}") from e
        self.body, self.mobile = made.physical, made.mobile
        self.skills = self.body.skills
        self._run = self.body.execute
        if made.mobile:
            self._body_state_publishers(group)
            self._household_perception(group)
        if self.get_parameter("publish_scene_graph").value:
            self.graph_pub = self.create_publisher(SceneGraph, "scene_graph",
                                                   QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
            self.create_service(GetSceneGraph, "get_scene_graph", self._get_graph, callback_group=group)
            self.create_timer(1.0 / self.get_parameter("publish_rate").value, self._publish_if_idle,
                              callback_group=group)

    def _household_perception(self, group: Any) -> None:
        """perception camera: the body's images to the perception node (ros/body_camera.py), and a
        first look around once the perception and scene graph nodes are there."""
        d = ParameterDescriptor
        mode = self.get_parameter("perception").value
        timeout = self.declare_parameter("frame_timeout", 2.0, d(description="seconds to wait for one image to be "
                                                                              "fused")).value
        if mode == "body":
            return
        if self.get_parameter("publish_scene_graph").value:
            self.destroy_body()
            raise ConceptAgentError("manipulation node: with perception camera the scene graph node publishes "
                                    "scene_graph; leave publish_scene_graph false")
        from conceptagent_ros.ros.body_camera import BodyCamera

        self.camera = BodyCamera(self, self.body, group, self.frame, timeout)
        self.looked = False  # the first look around goes to perception once it is up
        self._first_look = self.create_timer(0.5, self._look_once_perception_is_up, callback_group=group)

    def _look_once_perception_is_up(self) -> None:
        if self.looked or not self.camera.ready() or not self._lock.acquire(blocking=False):
            return
        try:
            self._first_look.cancel()
            self.body.look_around()
            self._publish_body()
            self.looked = True
        finally:
            self._lock.release()

    def _body_state_publishers(self, group: Any) -> None:
        """What rviz draws a household body from: its description (latched), its joint states, its
        base's pose (a topic, and map -> base_footprint on TF where tf2_ros is installed) and the
        path its base last planned; after every skill and at publish_rate while idle."""
        from rclpy.qos import DurabilityPolicy
        from std_msgs.msg import String

        from conceptagent_ros.ros.adapters.base_transform import BaseTransform

        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.create_publisher(String, "robot_description", latched).publish(String(data=self.body.description))
        self.joint_state_pub = self.create_publisher(JointState, "joint_states", 10)
        self.pose_pub = self.create_publisher(PoseStamped, "robot_pose", 10)
        self.path_pub = self.create_publisher(Path, "path", latched)
        self.base_transform = BaseTransform(self, "base_footprint")
        self.create_timer(1.0 / self.get_parameter("publish_rate").value, self._publish_body_if_idle,
                          callback_group=group)
        self._publish_body()

    def _publish_body(self) -> None:
        """The body's state now; the caller holds the body (self._lock) or knows it idle."""
        if self.joint_state_pub is None:
            return
        stamp = self.get_clock().now().to_msg()
        self.joint_state_pub.publish(joint_state_msg(*self.body.joint_state(), stamp))
        base = self.body.base_pose()
        pose = base_pose_msg(base.x, base.y, base.yaw, self.frame, stamp)
        self.pose_pub.publish(pose)
        self.base_transform.send(pose)
        if self.body.last_path != self._path_sent:
            self._path_sent = list(self.body.last_path)
            self.path_pub.publish(base_path_msg(self._path_sent, self.frame, stamp))

    def _publish_body_if_idle(self) -> None:
        if self._skill.locked() or not self._lock.acquire(blocking=False):
            return  # a skill is running; its end publishes
        try:
            self._publish_body()
        finally:
            self._lock.release()

    def _arm_body(self, group: Any, gripper_client: Any, gripper_action_type: Any) -> None:
        """A real arm: the perception node's points, the arm's controller, a GripperCommand gripper."""
        from conceptagent_ros.manipulation.arm_skills import ArmSkills
        from conceptagent_ros.manipulation.robot_spec import load_robot_spec
        from conceptagent_ros.ros.adapters.arm_body import ArmBodyConfig, RosArmBody
        from conceptagent_ros.ros.adapters.arm_controllers import ArmLinkConfig, JointTrajectoryArm, PoseTopicArm
        from conceptagent_ros.ros.adapters.base_pose import TfBasePose
        from conceptagent_ros.ros.adapters.manipulation_hand import GripperCommandGripper, GripperConfig
        from conceptagent_ros.voxposer.api import VoxelGrid
        from conceptagent_ros.voxposer.kinematics import KinematicsConfig, PybulletKinematics
        from conceptagent_ros.voxposer.tabletop import REST_POSE, TABLE_LOWER, TABLE_UPPER, WORKSPACE_LOWER, WORKSPACE_UPPER

        d, declare = ParameterDescriptor, self.declare_parameter
        arm_kind = declare("arm.kind", "pose_topic", d(description="pose_topic (Cartesian set-points) or "
                                                                    "follow_joint_trajectory")).value
        link = ArmLinkConfig(
            VoxelGrid(WORKSPACE_LOWER, WORKSPACE_UPPER, 100), TABLE_LOWER, TABLE_UPPER, self.frame,
            ee_pose_topic=declare("arm.ee_pose_topic", "ee_pose", d(description="end-effector pose")).value,
            target_topic=declare("arm.ee_target_topic", "ee_target", d(description="pose set-points")).value,
            joint_states_topic=declare("arm.joint_states_topic", "joint_states", d(description="joints")).value,
            base_speed=declare("arm.base_speed", 0.25, d(description="m/s at speed factor 1")).value,
            control_rate=declare("arm.control_rate", 50.0, d(description="set-points per second")).value,
            home=tuple(declare("arm.home", [0.45, 0.0, 0.35], d(description="rest pose of the tool, m")).value))  # type: ignore[arg-type]
        kinematics = PybulletKinematics(KinematicsConfig(
            declare("kinematics.urdf", "franka_panda/panda.urdf", d(description="the arm's URDF")).value,
            declare("kinematics.ee_link", "panda_grasptarget", d(description="tool link")).value,
            tuple(declare("kinematics.joint_names", [f"panda_joint{i}" for i in range(1, 8)],
                          d(description="arm joints")).value)))
        home_joints = declare("kinematics.home_joints", list(REST_POSE), d(description="IK seed, rad")).value
        self._kinematics = kinematics
        action = declare("arm.fjt_action", "/joint_trajectory_controller/follow_joint_trajectory",
                         d(description="FollowJointTrajectory action (arm.kind follow_joint_trajectory)")).value
        base_frame = declare("arm.base_frame", "", d(
            description="the kinematics' root link, looked up on TF in frame_id as the base moves (a mobile "
                        "manipulator: base_footprint); '' the root is frame_id")).value
        base = TfBasePose(self, self.frame, base_frame, self._tf_buffer) if base_frame else None
        if arm_kind == "pose_topic":
            arm: Any = PoseTopicArm(self, link, group)
        elif arm_kind == "follow_joint_trajectory":
            arm = JointTrajectoryArm(self, link, group, action, kinematics, base=base)
        else:
            raise ConceptAgentError(f"manipulation node: arm.kind {arm_kind!r} is not pose_topic or "
                                    "follow_joint_trajectory")
        gripper = GripperCommandGripper(self, GripperConfig(
            action=declare("gripper.action", "gripper_controller/gripper_cmd", d(description="GripperCommand")).value,
            open_gap=declare("gripper.open_gap", 0.08, d(description="metres between the fingers, open")).value,
            max_effort=declare("gripper.max_effort", 40.0, d(description="newtons, closing")).value,
            position_per_gap=declare("gripper.position_per_gap", 1.0,
                                     d(description="controller position per metre of gap (0.5: one finger)")).value,
            interface=declare("gripper.interface", "gripper_command", d(
                description="gripper_command (control_msgs/GripperCommand) or parallel_gripper_command "
                            "(control_msgs/ParallelGripperCommand, Jazzy's parallel_gripper_action_controller)")).value,
            joint=declare("gripper.joint", "", d(description="the joint a ParallelGripperCommand names")).value),
            group, action_type=gripper_action_type, client=gripper_client)
        body = RosArmBody(self, arm, gripper, kinematics, home_joints, ArmBodyConfig(
            points_service=declare("points_service", "perception/get_object_points",
                                   d(description="GetObjectPoints service of the perception node")).value,
            tool_axes=tuple(declare("hand.tool_axes", ["-y", "x", "z"],
                                    d(description="the tool link's axes as hand-frame axes")).value),  # type: ignore[arg-type]
            tool_offset=declare("hand.tool_offset", 0.02, d(description="tool link beyond the hand frame, m")).value),
            group, base=base)
        self.body = body
        self.skills = ArmSkills(body, load_robot_spec(self.get_parameter("robot").value), drawers=body.drawers,
                                floor_z=None, drawer_pull=declare("drawer_pull", 0.10, d(
                                    description="how far open() pulls a drawer out, m")).value)
        self._run = self.skills.execute

    # -- the scene as the cameras see it -----------------------------------------------------------------
    def graph_msg(self) -> SceneGraph:
        with self._lock:
            observation = self.body.observe()
        return graph_to_msg(observation, self.scene.rooms, self.scene.categories(), self.get_clock().now().to_msg(),
                            self.frame)

    def _publish_if_idle(self) -> None:
        if self.graph_pub is None or self._skill.locked():
            return  # a skill is running; its end publishes
        self.graph_pub.publish(self.graph_msg())

    def _get_graph(self, _request: GetSceneGraph.Request, response: GetSceneGraph.Response) -> GetSceneGraph.Response:
        response.graph = self.graph_msg()
        return response

    # -- one skill ---------------------------------------------------------------------------------------
    def _execute(self, goal_handle: Any, skill: str) -> ExecuteSkill.Result:
        call = call_from_msg(goal_handle.request.call)
        if call.skill != skill:
            return self._end(goal_handle, SkillOutcome(call, False, f"{call} sent to the {skill} server", "invalid"))
        if not self._skill.acquire(blocking=False):
            return self._end(goal_handle, SkillOutcome(call, False, f"{call} not executed: the arm is busy with "
                                                                    "another skill", "unavailable"))
        self._lock.acquire()  # after a look at the scene that may be under way
        from conceptagent_ros.manipulation.arm_skills import SkillWatch

        cancel = threading.Event()
        ended = threading.Event()
        watcher = threading.Thread(target=self._watch_cancel, args=(goal_handle, cancel, ended), daemon=True)
        watcher.start()
        last = [0.0]

        def progress(status: str, fraction: float) -> None:
            last[0] = fraction if fraction >= 0 else last[0]
            goal_handle.publish_feedback(ExecuteSkill.Feedback(status=f"{call}: {status}", progress=float(last[0])))

        try:
            acted = self.camera.resolve(call) if self.camera is not None else call
            outcome = replace(self._run(acted, SkillWatch(cancel, progress)), call=call)
            if acted != call:
                outcome = replace(outcome, message=f"{outcome.message} (as {acted})")
            plan = self.skills.last_grasp_plan
            if call.skill == "pick" and plan is not None:
                self.markers_pub.publish(grasp_markers(plan.candidates, self.skills.last_grasp,
                                                       self.get_clock().now().to_msg(), self.frame))
            if self.camera is not None:  # the scene graph node hears what the skill did before the planner
                self.camera.record(goal_handle.request.call, outcome.success)
            # after the record: the scene graph node holds its graph for a pose stamped after it
            self._publish_body()
        finally:
            ended.set()
            self._lock.release()
        try:
            return self._end(goal_handle, outcome)
        finally:
            self._skill.release()

    @staticmethod
    def _watch_cancel(goal_handle: Any, cancel: threading.Event, ended: threading.Event) -> None:
        while not ended.wait(CANCEL_POLL_SECONDS):
            if goal_handle.is_cancel_requested:
                cancel.set()
                return

    def _end(self, goal_handle: Any, outcome: SkillOutcome) -> ExecuteSkill.Result:
        result = outcome_to_result(outcome)
        result.finished = self.get_clock().now().to_msg()
        if self.graph_pub is not None:  # what the skill changed goes out before the result, stamped after it
            self.graph_pub.publish(self.graph_msg())
        end_goal(goal_handle, outcome)
        self.get_logger().info(outcome.message)
        return result

    def destroy_body(self) -> None:
        close = getattr(self.body, "close", None)
        if close is not None:
            close()
        self.body = None
        kinematics = getattr(self, "_kinematics", None)
        if kinematics is not None:
            kinematics.close()
            self._kinematics = None

    def destroy_node(self) -> None:
        with self._lock:
            self.destroy_body()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    run_node(ManipulationNode, threads=4, args=args)
