"""The robot stand-in: the embedded household world playing a robot's hardware behind the same ROS
API a real robot offers -- skill servers, a camera, its pose, a reset -- so the whole graph runs with
no robot and no Gazebo.

It does not build the planner's scene graph from perception: with perception=camera the scene
graph node (ros/scene_graph_node.py) does, from the perception node's perceived_graph, the pose and
the skills' outcomes, exactly as on a real robot. With perception=truth the stand-in publishes the
simulator's ground-truth scene graph (what a perfect perception would say), for the planner-only
graph.

Actions:     skills/<skill> (conceptagent_ros/ExecuteSkill)  every skill of config/skills.yaml; feedback while it
                                                             runs (skill_duration), cancelable
Publishes:   robot_pose (geometry_msgs/PoseStamped)          always
             scene_markers (visualization_msgs/MarkerArray)  the simulated world as it is: boxes, labels,
                                                             containment, rooms, robot
             /tf (map -> base_link)                          where tf2_ros is installed
             perception=truth: scene_graph (conceptagent_ros/SceneGraph), the ground truth in view, at
             publish_rate and after every skill (before its result, stamped after its end)
             perception=camera: rgb, depth (sensor_msgs/Image), camera_info (sensor_msgs/CameraInfo),
             pose (geometry_msgs/PoseStamped, the camera's), instances (sensor_msgs/Image 32SC1, the
             segmentation camera a simulator has) and instance_names (std_msgs/String, latched JSON)
Subscribes:  perception=camera: perceived_graph (conceptagent_ros/SceneGraph), to wait for each frame
             to be fused and to know which of its things a perceived id in a skill call means
Services:    reset (std_srvs/Trigger)                        a fresh world of the same scene and seed
             query_objects (conceptagent_ros/QueryObjects)   lexical match on ids and labels of what is in view
             perception=truth: get_scene_graph (conceptagent_ros/GetSceneGraph)
Calls:       perception=camera: record_skill_outcome (conceptagent_ros/RecordSkillOutcome) as each skill
             ends, before its result, as robot_skills does on a robot
Parameters:  scene (string, studio_kitchen): built-in name or scene YAML path; seed (int, 0);
             failure_rates (string[], []): injected physical failures, e.g. ["pick=0.3"];
             skill_duration (double, 0.0 s): how long each skill takes; publish_rate (double, 5.0 Hz);
             frame_id (string, map); base_frame (string, base_link);
             perception (string, truth): truth | camera (the robot looks around after every skill
             with the synthetic RGB-D camera and waits for the perception node to fuse each frame);
             frame_timeout (double, 2.0 s): the longest wait for one frame's perceived_graph

No callback blocks: a skill that takes time is a coroutine that awaits timers, so a
single-threaded executor serves it (rclpy's fastest) and still takes cancel requests meanwhile.
"""
from __future__ import annotations

import functools
import math
import threading
import time
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.action import CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.bodies.embedded.perceiving_robot import EmbeddedCamera
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.msg import SkillCall as SkillCallMsg
from conceptagent_ros.ros.action_server import ActionServer
from conceptagent_ros.ros.adapters.base_transform import BaseTransform
from conceptagent_ros.ros.camera_streams import CameraStreams, things_of
from conceptagent_ros.ros.conversions.markers import scene_markers
from conceptagent_ros.ros.conversions.scene import graph_to_msg, pose_msg, scene_object_to_msg
from conceptagent_ros.ros.conversions.skills import call_from_msg, outcome_to_result
from conceptagent_ros.ros.node_teardown import DestroysItsActions
from conceptagent_ros.ros.spin import run_node
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.sim.perceived_ids import PerceivedIdResolver
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome, load_skill_library
from conceptagent_ros.skills.failure_rates import parse_failure_rates
from conceptagent_ros.srv import GetSceneGraph, QueryObjects, RecordSkillOutcome

FEEDBACK_PERIOD = 0.05
OUTCOME_WAIT_S = 2.0


class StandInCamera:
    """The stand-in's RGB-D camera on the node (ros/camera_streams.py): publishes each frame of a
    look around, waits until the perception node has fused it, and keeps what perception last said
    (for the id resolver)."""

    def __init__(self, node: RobotStandInNode, group: ReentrantCallbackGroup):
        self.node = node
        self.streams = CameraStreams(node, group, node.frame, self.on_perceived)
        self.start(node.world)

    def start(self, world: World) -> None:
        """A fresh camera on a (new) world: nothing perceived yet."""
        self.camera = EmbeddedCamera(world, seed=self.node.get_parameter("seed").value)
        self.ids = PerceivedIdResolver(world.scene, lambda: self.camera.boxes, lambda: world.robot.holding)
        self.instance_index = {oid: i for i, oid in enumerate(sorted(world.scene.objects))}
        self.streams.name_instances([(oid, world.scene.objects[oid].category) for oid in sorted(world.scene.objects)])

    def on_perceived(self, msg: SceneGraph) -> None:
        self.ids.remember(things_of(msg))

    @property
    def perceived(self) -> SceneGraph | None:
        return self.streams.perceived

    @property
    def boxes(self) -> dict[str, Any]:
        """Where the simulator's things stand now (house_geometry.Box by object id)."""
        return self.camera.boxes

    def streams_matched(self) -> bool:
        return self.streams.streams_matched()

    def resolve(self, call: SkillCall) -> SkillCall:
        """Perceived ids in `call` as the world's things (where perception saw them)."""
        current = self.ids.not_held(things_of(self.perceived)) if self.perceived is not None else []
        return self.ids.resolve_call(call, current)

    async def look(self) -> None:
        """Look around; hand each frame to the perception node and wait until it has fused it (a
        robot turning its head slowly enough for its perception)."""
        node = self.node
        if not self.streams.perception_listens():
            node.get_logger().warning("perception=camera but no perception node subscribes to rgb", throttle_duration_sec=10.0)
            return
        for frame in self.camera.look_around():
            assert frame.instance_ids is not None
            to_global = np.array([self.instance_index[n] for n in frame.instance_names] + [-1], dtype=np.int32)
            sent = self.streams.publish(frame, to_global[frame.instance_ids])  # -1 (background): the last entry
            deadline = time.monotonic() + node.get_parameter("frame_timeout").value
            while time.monotonic() < deadline and not self.streams.fused(sent):
                await node.sleep(0.005)


class RobotStandInNode(DestroysItsActions, Node):
    __doc__ = __doc__

    def __init__(self, node_name: str = "robot", namespace: str = "", **kwargs: Any):
        super().__init__(node_name, namespace=namespace, **kwargs)
        self.skills = load_skill_library()
        d = ParameterDescriptor
        seconds = [FloatingPointRange(from_value=0.0, to_value=600.0)]
        self.declare_parameter("scene", "studio_kitchen", d(description="built-in scene name or scene YAML path"))
        self.declare_parameter("seed", 0, d(description="seed of injected failures"))
        self.declare_parameter("failure_rates", [""], d(description="injected physical failures, SKILL=P each"))
        self.declare_parameter("skill_duration", 0.0, d(description="seconds each skill takes", floating_point_range=seconds))
        self.declare_parameter("publish_rate", 5.0, d(description="scene graph and pose rate, Hz",
                                                      floating_point_range=[FloatingPointRange(from_value=0.1, to_value=100.0)]))
        self.declare_parameter("frame_id", "map", d(description="fixed frame"))
        self.declare_parameter("base_frame", "base_link", d(description="robot base frame for TF"))
        self.declare_parameter("perception", "truth", d(description="truth | camera (objects from the perception node)"))
        self.declare_parameter("frame_timeout", 2.0, d(description="seconds to wait for the perception node per frame"))
        mode = self.get_parameter("perception").value
        if mode not in ("truth", "camera"):
            raise ConceptAgentError(f"perception must be truth or camera, not {mode!r}")
        self._lock = threading.Lock()
        self._yaw = 0.0
        self.world = self._new_world()
        # What the skills did since the last reset, as the world saw them (perceived ids resolved):
        # the story of a failed episode, for benchmarks and tests to show.
        self.executed: list[str] = []
        self.frame = self.get_parameter("frame_id").value

        group = ReentrantCallbackGroup()
        self.pose_pub = self.create_publisher(PoseStamped, "robot_pose", 10)
        self.marker_pub = self.create_publisher(MarkerArray, "scene_markers", 1)
        self.tf = BaseTransform(self, self.get_parameter("base_frame").value)
        self.servers = [
            ActionServer(self, ExecuteSkill, f"skills/{spec.name}",
                         execute_callback=functools.partial(self.execute_skill, skill=spec.name),
                         goal_callback=self.accept_goal, cancel_callback=self.accept_cancel, callback_group=group)
            for spec in self.skills.actionable()
        ]
        self.create_service(QueryObjects, "query_objects", self._query, callback_group=group)
        self.create_service(Trigger, "reset", self._reset, callback_group=group)
        self.camera: StandInCamera | None = None
        self.graph_pub: Publisher | None = None
        self._outcomes = None
        self.looked = True  # truth: the world is in view from the start
        if mode == "camera":
            self.camera = StandInCamera(self, group)
            self._outcomes = self.create_client(RecordSkillOutcome, "record_skill_outcome", callback_group=group)
            self.looked = False  # no pose until the first look (the scene graph node waits for it)
            self._first_look = self.create_timer(0.5, self._look_once_perception_is_up, callback_group=group)
        else:
            self.graph_pub = self.create_publisher(SceneGraph, "scene_graph",
                                                   QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
            self.create_service(GetSceneGraph, "get_scene_graph", self._get_graph, callback_group=group)
        self.create_timer(1.0 / self.get_parameter("publish_rate").value, self.publish_state, callback_group=group)
        # rviz follows a skill within 50 ms, off the skill's critical path
        self._markers_due = threading.Event()
        self.create_timer(0.05, self._publish_markers_if_due, callback_group=group)
        self.get_logger().info(f"robot stand-in on scene '{self.world.scene.name}' serving "
                               f"{len(self.servers)} skills, perception {mode}")

    @property
    def perceived(self) -> SceneGraph | None:
        """The perception node's last graph (perception=camera)."""
        return self.camera.perceived if self.camera is not None else None

    def _new_world(self) -> World:
        scene = load_scene(self.get_parameter("scene").value)
        rates = [r for r in self.get_parameter("failure_rates").value if r]
        failures = parse_failure_rates(rates, self.skills.names(), "failure_rates")
        self._yaw = 0.0
        return World(scene, seed=self.get_parameter("seed").value, failure_rates=failures, skills=self.skills)

    async def _look_once_perception_is_up(self) -> None:
        assert self.camera is not None
        if not self.camera.streams_matched():
            return  # the perception node is not (all) there yet
        self._first_look.cancel()
        await self.camera.look()
        self.looked = True
        self.publish_state()

    # -- state out -------------------------------------------------------------------------------------
    def graph_msg(self) -> SceneGraph:
        """The ground truth in view (perception=truth)."""
        with self._lock:
            return self._truth_msg(self.world.observe(), self.get_clock().now().to_msg())

    def _truth_msg(self, observation: Observation, stamp: Time) -> SceneGraph:
        return graph_to_msg(observation, self.world.scene.rooms, self.world.scene.categories(), stamp, self.frame,
                            self._yaw)

    def _publish_markers_if_due(self) -> None:
        if self._markers_due.is_set():
            self.publish_state()

    def publish_state(self) -> None:
        if not self.looked:
            return
        self._markers_due.clear()
        stamp = self.get_clock().now().to_msg()
        graph = None
        with self._lock:  # one look at the world serves the graph, the pose and the markers
            observation = self.world.observe()
            if self.graph_pub is not None:
                graph = self._truth_msg(observation, stamp)
            pose = PoseStamped()
            pose.header.stamp, pose.header.frame_id = stamp, self.frame
            pose.pose = pose_msg(self.world.robot.position, self._yaw)
            markers = scene_markers(observation.objects, self.world.scene.rooms, observation.robot, stamp, self.frame)
        if graph is not None:
            self.graph_pub.publish(graph)
        self.pose_pub.publish(pose)
        self.marker_pub.publish(markers)
        self.tf.send(pose)  # where tf2_ros is installed

    # -- skills ----------------------------------------------------------------------------------------
    def sleep(self, seconds: float) -> Future:
        """A future done after `seconds`: awaited by a skill, it hands the executor back meanwhile."""
        done = Future()

        def fire() -> None:
            timer.cancel()
            self.destroy_timer(timer)
            if not done.done():
                done.set_result(None)

        timer = self.create_timer(seconds, fire)
        return done

    def accept_goal(self, _goal: ExecuteSkill.Goal) -> GoalResponse:
        """Every goal is taken: a skill server of a robot with one body runs what it is sent (the
        planner sends one skill at a time)."""
        return GoalResponse.ACCEPT

    def accept_cancel(self, _handle: ServerGoalHandle) -> CancelResponse:
        """A cancel is always taken; the running skill stops at its next feedback period."""
        return CancelResponse.ACCEPT

    async def execute_skill(self, goal_handle: ServerGoalHandle, skill: str) -> ExecuteSkill.Result:
        """Run one skill on the world: feedback while it takes skill_duration, then its outcome; with
        the camera, a look around (fused by perception) and the outcome recorded with the scene graph
        node before the result goes out."""
        call = call_from_msg(goal_handle.request.call)
        if call.skill != skill:
            outcome = SkillOutcome(call, False, f"{call} sent to the {skill} server", "invalid")
            goal_handle.abort()
            return outcome_to_result(outcome)
        duration = self.get_parameter("skill_duration").value
        started = time.monotonic()
        while time.monotonic() - started < duration:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return outcome_to_result(SkillOutcome(call, False, f"{call} canceled", "canceled"))
            fb = ExecuteSkill.Feedback(status=f"running {call}", progress=float((time.monotonic() - started) / duration))
            goal_handle.publish_feedback(fb)
            await self.sleep(FEEDBACK_PERIOD)
        outcome = self._apply(call)
        if self.camera is not None:
            await self.camera.look()  # what the skill changed, seen before the result goes out
            await self._tell_the_scene_graph(goal_handle.request.call, outcome.success)
            self.publish_state()  # the pose the scene graph node holds its next graph for (stamped after the record)
        result = outcome_to_result(outcome)
        result.finished = self.get_clock().now().to_msg()
        # The world after the skill goes out before the result, stamped after `finished`.
        if self.graph_pub is not None:
            self.graph_pub.publish(self.graph_msg())
        self._markers_due.set()
        if outcome.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    async def _tell_the_scene_graph(self, call_msg: SkillCallMsg, success: bool) -> None:
        """As robot_skills does on a real robot: the scene graph node hears what the skill did first."""
        if self._outcomes is None or not self._outcomes.service_is_ready():
            self.get_logger().warning("no scene graph node records skill outcomes", throttle_duration_sec=10.0)
            return
        future = self._outcomes.call_async(RecordSkillOutcome.Request(call=call_msg, success=success))
        deadline = time.monotonic() + OUTCOME_WAIT_S
        while not future.done() and time.monotonic() < deadline:
            await self.sleep(0.005)

    def _apply(self, call: SkillCall) -> SkillOutcome:
        with self._lock:
            before = self.world.robot.position
            acted = self.camera.resolve(call) if self.camera is not None else call
            outcome = self.world.execute(acted)
            self.executed.append(f"{call}" + (f" as {acted}" if acted != call else "")
                                 + ("" if outcome.success else f" -> {outcome.failure or 'failed'}"))
            after = self.world.robot.position
            if math.hypot(after[0] - before[0], after[1] - before[1]) > 1e-6:
                self._yaw = math.atan2(after[1] - before[1], after[0] - before[0])
            return SkillOutcome(call, outcome.success, outcome.message, outcome.failure)

    # -- services --------------------------------------------------------------------------------------
    def _get_graph(self, _request: GetSceneGraph.Request, response: GetSceneGraph.Response) -> GetSceneGraph.Response:
        response.graph = self.graph_msg()
        return response

    def _query(self, request: QueryObjects.Request, response: QueryObjects.Response) -> QueryObjects.Response:
        text = " ".join(request.text.lower().split()).replace(" ", "_")
        with self._lock:
            seen = self.world.observe().objects
        scored = []
        for obj in seen:
            score = 1.0 if text in (obj.id, obj.category) else 0.5 if text and (text in obj.id or text in obj.category) else 0.0
            if score > 0:
                scored.append((score, obj))
        scored.sort(key=lambda pair: (-pair[0], pair[1].id))
        if request.max_results:
            scored = scored[: request.max_results]
        stamp = self.get_clock().now().to_msg()
        response.objects = [scene_object_to_msg(obj, stamp) for _, obj in scored]
        response.scores = [score for score, _ in scored]
        return response

    def _reset(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        try:
            world = self._new_world()
        except ConceptAgentError as e:
            response.success, response.message = False, str(e)
            return response
        with self._lock:
            self.world = world
            self.executed = []
            if self.camera is not None:
                self.camera.start(world)  # the next look (within 0.5 s) starts the map afresh
                self.looked = False
                self._first_look.reset()
        response.success, response.message = True, f"world reset to scene '{world.scene.name}'"
        return response


def main(args: list[str] | None = None) -> None:
    run_node(RobotStandInNode, threads=1, args=args)
