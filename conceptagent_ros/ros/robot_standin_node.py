"""The robot stand-in: the embedded household world behind the same ROS API a real robot offers, so
the whole graph runs with no robot and no Gazebo.

Actions:     skills/<skill> (conceptagent_ros/ExecuteSkill)  every skill of config/skills.yaml; feedback while it
                                                             runs (skill_duration), cancelable

No callback blocks: a skill that takes time is a coroutine that awaits timers, so a
single-threaded executor serves it (rclpy's fastest) and still takes cancel requests meanwhile.
Publishes:   scene_graph (conceptagent_ros/SceneGraph)        what the robot perceives now, at publish_rate and after
                                                             every skill (before its result, stamped after its end)
             robot_pose (geometry_msgs/PoseStamped)          always
             scene_markers (visualization_msgs/MarkerArray)  boxes, labels, containment, rooms, robot
             /tf (map -> base_link)                          where tf2_ros is installed
Services:    get_scene_graph (conceptagent_ros/GetSceneGraph)
             query_objects (conceptagent_ros/QueryObjects)   lexical match on ids and labels of what is in view
             reset (std_srvs/Trigger)                        a fresh world of the same scene and seed
Parameters:  scene (string, studio_kitchen): built-in name or scene YAML path; seed (int, 0);
             failure_rates (string[], []): injected physical failures, e.g. ["pick=0.3"];
             skill_duration (double, 0.0 s): how long each skill takes; publish_rate (double, 5.0 Hz);
             frame_id (string, map); base_frame (string, base_link);
             perception (string, truth): truth -- scene_graph lists what the world shows; camera -- the
             robot looks around after every skill with the synthetic RGB-D camera (rgb, depth,
             camera_info, pose: what the perception node subscribes to), waits for the perception
             node's perceived_graph of each frame, and scene_graph lists the perceived objects (with
             the robot's own state: where it is, what it holds);
             publish_scene_graph (bool, true): false -- the stand-in plays only a robot's hardware (camera,
             robot_pose, skills) and the scene graph node (ros/scene_graph_node.py) builds scene_graph,
             as on a real robot; each skill's outcome then goes to its record_skill_outcome service
             before the result, and the stand-in serves no get_scene_graph
"""
from __future__ import annotations

import functools
import json
import math
import threading
import time

from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.ros.conversions.markers import scene_markers
from conceptagent_ros.ros.conversions.scene import graph_to_msg, scene_object_to_msg
from conceptagent_ros.ros.conversions.skills import call_from_msg, outcome_to_result
from conceptagent_ros.ros.spin import run_node
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome, load_skill_library
from conceptagent_ros.srv import GetSceneGraph, QueryObjects

FEEDBACK_PERIOD = 0.05
POSE_WAIT_S = 5.0  # for the perception node's pose subscription before the first look


def parse_failure_rates(items: list[str], skills: list[str]) -> dict[str, float]:
    rates: dict[str, float] = {}
    for item in items:
        skill, eq, value = item.partition("=")
        try:
            rate = float(value) if eq else float("nan")
        except ValueError:
            rate = float("nan")
        if not math.isfinite(rate) or not 0.0 <= rate <= 1.0:
            raise ConceptAgentError(f"failure_rates entry {item!r}: use SKILL=P with P in [0, 1]")
        if skill not in skills:
            raise ConceptAgentError(f"failure_rates entry {item!r}: unknown skill; skills are {', '.join(skills)}")
        rates[skill] = rate
    return rates


class RobotStandInNode(Node):
    __doc__ = __doc__

    def __init__(self, node_name: str = "robot", namespace: str = "", **kwargs: object):
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
        self.declare_parameter("publish_scene_graph", True,
                               d(description="false: the scene graph node builds scene_graph (the real-robot layout)"))
        self._lock = threading.Lock()
        self._yaw = 0.0
        self.world = self._new_world()
        self.frame = self.get_parameter("frame_id").value

        group = ReentrantCallbackGroup()
        reliable = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        self.graph_pub = self.create_publisher(SceneGraph, "scene_graph", reliable)
        self.pose_pub = self.create_publisher(PoseStamped, "robot_pose", 10)
        self.marker_pub = self.create_publisher(MarkerArray, "scene_markers", 1)
        self.tf = self._tf_broadcaster()
        self.servers = [
            ActionServer(self, ExecuteSkill, f"skills/{spec.name}",
                         execute_callback=functools.partial(self._execute, skill=spec.name),
                         goal_callback=lambda _goal: GoalResponse.ACCEPT,
                         cancel_callback=lambda _handle: CancelResponse.ACCEPT, callback_group=group)
            for spec in self.skills.actionable()
        ]
        self.owns_graph = self.get_parameter("publish_scene_graph").value
        self._outcomes = None
        if self.owns_graph:
            self.create_service(GetSceneGraph, "get_scene_graph", self._get_graph, callback_group=group)
        else:
            from conceptagent_ros.srv import RecordSkillOutcome

            self._outcomes = self.create_client(RecordSkillOutcome, "record_skill_outcome", callback_group=group)
        self.create_service(QueryObjects, "query_objects", self._query, callback_group=group)
        self.create_service(Trigger, "reset", self._reset, callback_group=group)
        self.create_timer(1.0 / self.get_parameter("publish_rate").value, self.publish_state, callback_group=group)
        self.camera_mode = self.get_parameter("perception").value == "camera"
        self.looked = True
        if self.get_parameter("perception").value not in ("truth", "camera"):
            raise ConceptAgentError(f"perception must be truth or camera, not {self.get_parameter('perception').value!r}")
        if self.camera_mode:
            self._set_up_camera(group)
        # rviz follows a skill within 50 ms, off the skill's critical path
        self._markers_due = threading.Event()
        self.create_timer(0.05, self._publish_markers_if_due, callback_group=group)
        self.get_logger().info(f"robot stand-in on scene '{self.world.scene.name}' serving "
                               f"{len(self.servers)} skills")

    def _new_world(self) -> World:
        scene = load_scene(self.get_parameter("scene").value)
        rates = [r for r in self.get_parameter("failure_rates").value if r]
        failures = parse_failure_rates(rates, self.skills.names())
        self._yaw = 0.0
        return World(scene, seed=self.get_parameter("seed").value, failure_rates=failures, skills=self.skills)

    def _tf_broadcaster(self):  # noqa: ANN202 - tf2_ros.TransformBroadcaster or None
        try:  # not pip-installable: TF only where ROS is installed; robot_pose always
            from tf2_ros import TransformBroadcaster
        except ImportError:
            self.get_logger().info("tf2_ros not installed: publishing robot_pose only, no TF")
            return None
        return TransformBroadcaster(self)

    # -- the camera (perception=camera) ----------------------------------------------------------------
    def _set_up_camera(self, group: ReentrantCallbackGroup) -> None:
        from sensor_msgs.msg import CameraInfo, Image

        from conceptagent_ros.sim.perceiving_robot import EmbeddedCamera

        self.camera = EmbeddedCamera(self.world, seed=self.get_parameter("seed").value)
        reliable = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        self.rgb_pub = self.create_publisher(Image, "rgb", reliable)
        self.depth_pub = self.create_publisher(Image, "depth", reliable)
        self.info_pub = self.create_publisher(CameraInfo, "camera_info", reliable)
        self.camera_pose_pub = self.create_publisher(PoseStamped, "pose", 20)
        # the segmentation camera a simulator has (for the perception node's oracle detector)
        from std_msgs.msg import String

        self.instances_pub = self.create_publisher(Image, "instances", reliable)
        # what each instance id means: every object of the scene, once, latched (ids index this list
        # in every frame, so no frame waits for names of its own)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.names_pub = self.create_publisher(String, "instance_names", latched)
        self._publish_instance_names()
        self.perceived: SceneGraph | None = None
        self.remembered: dict = {}  # every perceived id as last seen, for skill calls naming ids since merged
        self._streams_up_at: float | None = None  # when colour, depth and camera info were all matched
        self.looked = False  # no scene_graph until the first look: an empty one would tell the planner "nothing here"
        # The state the robot's own skills left things in (it opened the fridge; the camera cannot tell)
        self.known_states: dict[str, dict[str, bool]] = {}
        # The gripper tells perception what it took, so the map does not keep it where it was
        from std_msgs.msg import String

        self.forget_pub = self.create_publisher(String, "perception/forget", 10)
        self.create_subscription(SceneGraph, "perceived_graph", self._on_perceived, reliable, callback_group=group)
        self._first_look = self.create_timer(0.5, self._look_once_perception_is_up, callback_group=group)

    def _publish_instance_names(self) -> None:
        from std_msgs.msg import String

        self.instance_index = {oid: i for i, oid in enumerate(sorted(self.world.scene.objects))}
        labels = [[oid, self.world.scene.objects[oid].category] for oid in sorted(self.world.scene.objects)]
        self.names_pub.publish(String(data=json.dumps(labels)))

    def _on_perceived(self, msg: SceneGraph) -> None:
        self.perceived = msg
        self.remembered.update((t.id, t) for t in self._things_of(msg))

    async def _look_once_perception_is_up(self) -> None:
        # Every stream a frame needs must be matched: a frame sent while DDS still discovers one of
        # them is lost, and each lost frame costs frame_timeout before the look goes on
        # (the pose topic too, unless perception takes poses from TF: given up on after a few seconds)
        if any(p.get_subscription_count() == 0 for p in (self.rgb_pub, self.depth_pub, self.info_pub)):
            return  # the perception node is not (all) there yet
        self._streams_up_at = self._streams_up_at or time.monotonic()
        if self.camera_pose_pub.get_subscription_count() == 0 and time.monotonic() - self._streams_up_at < POSE_WAIT_S:
            return
        self._first_look.cancel()
        await self._look()
        self.looked = True
        self.publish_state()

    async def _look(self) -> None:
        """Look around; hand each frame to the perception node and wait until it has fused it (a
        robot turning its head slowly enough for its perception)."""
        import numpy as np

        from conceptagent_ros.ros.conversions.perception import frame_messages, image_msg

        if self.rgb_pub.get_subscription_count() == 0:
            self.get_logger().warning("perception=camera but no perception node subscribes to rgb", throttle_duration_sec=10.0)
            return
        clock = self.get_clock()
        frames = self.camera.look_around(stamp=lambda: clock.now().nanoseconds * 1e-9)
        k = self.camera.config.intrinsics()
        for frame in frames:
            msgs = frame_messages(frame, k, self.frame)
            assert frame.instance_ids is not None
            to_global = np.array([self.instance_index[n] for n in frame.instance_names] + [-1], dtype=np.int32)
            instances = image_msg(to_global[frame.instance_ids], msgs.rgb.header.frame_id)  # -1 (background): the last entry
            instances.header.stamp = msgs.rgb.header.stamp
            self.info_pub.publish(msgs.info)
            self.camera_pose_pub.publish(msgs.pose)
            self.rgb_pub.publish(msgs.rgb)
            self.depth_pub.publish(msgs.depth)
            self.instances_pub.publish(instances)
            stamp = msgs.rgb.header.stamp
            sec, nsec = stamp.sec, stamp.nanosec
            deadline = time.monotonic() + self.get_parameter("frame_timeout").value
            while time.monotonic() < deadline:
                seen = self.perceived.header.stamp if self.perceived is not None else None
                if seen is not None and (seen.sec, seen.nanosec) >= (sec, nsec):
                    break
                await self._sleep(0.005)

    def _perceived_things(self) -> list:
        from conceptagent_ros.sim.perceiving_robot import resolve

        if self.perceived is None:
            return []
        things = self._things_of(self.perceived)
        held = self.world.robot.holding
        return [t for t in things if held is None or resolve(self.world, self.camera.boxes, t, t.id) != held]

    @staticmethod
    def _things_of(graph: SceneGraph) -> list:
        from conceptagent_ros.sim.perceiving_robot import PerceivedThing

        things = []
        for o in graph.objects:
            p, size = o.pose.position, o.size
            things.append(PerceivedThing(o.id, o.label, (p.x, p.y, p.z), p.z + size.z / 2, o.parent or None,
                                         {k: True for k in o.state}))
        return things

    # -- state out -------------------------------------------------------------------------------------
    def _observation(self):  # noqa: ANN202 - Observation
        if not self.camera_mode:
            return self.world.observe()
        from conceptagent_ros.sim.perceiving_robot import observation_from

        return observation_from(self.world, self._perceived_things(), self.known_states)

    def graph_msg(self) -> SceneGraph:
        with self._lock:
            observation = self._observation()
            return graph_to_msg(observation, self.world.scene.rooms, self.world.scene.categories(),
                                self.get_clock().now().to_msg(), self.frame, self._yaw)

    def _publish_markers_if_due(self) -> None:
        if self._markers_due.is_set():
            self.publish_state()

    def publish_state(self) -> None:
        if self.camera_mode and not self.looked:
            return
        self._markers_due.clear()
        msg = self.graph_msg()
        if self.owns_graph:
            self.graph_pub.publish(msg)
        pose = PoseStamped()
        pose.header = msg.header
        pose.pose = msg.robot.pose
        self.pose_pub.publish(pose)
        with self._lock:
            observation = self._observation()
            markers = scene_markers(observation.objects, self.world.scene.rooms, observation.robot,
                                    msg.header.stamp, self.frame)
        self.marker_pub.publish(markers)
        if self.tf is not None:
            from geometry_msgs.msg import TransformStamped

            t = TransformStamped()
            t.header = msg.header
            t.child_frame_id = self.get_parameter("base_frame").value
            p, o = msg.robot.pose.position, msg.robot.pose.orientation
            t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = p.x, p.y, p.z
            t.transform.rotation = o
            self.tf.sendTransform(t)

    # -- skills ----------------------------------------------------------------------------------------
    def _sleep(self, seconds: float) -> Future:
        """A future done after `seconds`: awaited by a skill, it hands the executor back meanwhile."""
        done = Future()

        def fire() -> None:
            timer.cancel()
            self.destroy_timer(timer)
            if not done.done():
                done.set_result(None)

        timer = self.create_timer(seconds, fire)
        return done

    async def _execute(self, goal_handle, skill: str) -> ExecuteSkill.Result:  # noqa: ANN001 - ServerGoalHandle
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
            await self._sleep(FEEDBACK_PERIOD)
        outcome = self._apply(call)
        if self.camera_mode:
            await self._look()  # what the skill changed, seen before the result goes out
        result = outcome_to_result(outcome)
        if not self.owns_graph:
            await self._tell_the_scene_graph(goal_handle.request.call, outcome.success)
        result.finished = self.get_clock().now().to_msg()
        # The world after the skill goes out before the result, stamped after `finished`.
        if self.owns_graph:
            self.graph_pub.publish(self.graph_msg())
        self._markers_due.set()
        if outcome.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    async def _tell_the_scene_graph(self, call_msg, success: bool) -> None:  # noqa: ANN001 - SkillCall msg
        """As robot_skills does on a real robot: the scene graph node hears what the skill did first."""
        from conceptagent_ros.srv import RecordSkillOutcome

        if self._outcomes is None or not self._outcomes.service_is_ready():
            self.get_logger().warning("no scene graph node records skill outcomes", throttle_duration_sec=10.0)
            return
        future = self._outcomes.call_async(RecordSkillOutcome.Request(call=call_msg, success=success))
        deadline = time.monotonic() + 2.0
        while not future.done() and time.monotonic() < deadline:
            await self._sleep(0.005)

    def _apply(self, call: SkillCall) -> SkillOutcome:
        with self._lock:
            before = self.world.robot.position
            sent = call
            if self.camera_mode:  # perceived ids mean the world's things where the camera saw them
                from conceptagent_ros.sim.perceiving_robot import resolve

                # An id the planner got from an earlier graph may be gone from the map now (two views
                # of one fridge fused, the younger name dropped): it still means where it was seen.
                # Only such ids: a held thing is not in the map either, and where it was last seen
                # (beside another of its kind, perhaps) no longer says which one it is.
                things = {t.id: t for t in self._perceived_things()}
                for a in call.args:
                    if a not in things and a not in self.world.scene.objects and a in self.remembered:
                        things[a] = self.remembered[a]
                call = SkillCall(call.skill, tuple(resolve(self.world, self.camera.boxes, things.get(a), a) for a in call.args))
            outcome = self.world.execute(call)
            if self.camera_mode and outcome.success:
                for oid in self.world.touched:
                    self.known_states[oid] = dict(self.world.scene.objects[oid].state)
                if call.skill == "pick" and self.owns_graph:  # else the scene graph node tells perception
                    from std_msgs.msg import String

                    self.forget_pub.publish(String(data=sent.args[0]))
            outcome = SkillOutcome(sent, outcome.success, outcome.message, outcome.failure)
            after = self.world.robot.position
            if math.hypot(after[0] - before[0], after[1] - before[1]) > 1e-6:
                self._yaw = math.atan2(after[1] - before[1], after[0] - before[0])
            return outcome

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
            if self.camera_mode:
                from conceptagent_ros.sim.perceiving_robot import EmbeddedCamera

                self.camera = EmbeddedCamera(world, seed=self.get_parameter("seed").value)
                self.perceived, self.looked = None, False  # the next look (within 0.5 s) starts the map afresh
                self.remembered = {}
                self.known_states = {}
                self._first_look.reset()
                self._publish_instance_names()
        response.success, response.message = True, f"world reset to scene '{world.scene.name}'"
        return response


def main(args: list[str] | None = None) -> None:
    run_node(RobotStandInNode, threads=1, args=args)
