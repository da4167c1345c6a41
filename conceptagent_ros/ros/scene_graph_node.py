"""The scene graph a real robot's planner reads: the perception node's objects, the robot's pose,
and what the robot's own skills did (scene/robot_memory.py). The one builder of scene_graph from
perception, on a robot and on the embedded stand-in alike (whose camera mode plays only hardware):
this node closes the loop perception -> planner.

Subscribes:  perceived_graph (conceptagent_ros/SceneGraph)   the perception node's fused objects
             robot_pose (geometry_msgs/PoseStamped or nav_msgs/Odometry; pose_source topic), or TF
             world_frame -> base_frame (pose_source tf, where tf2_ros is installed)
Publishes:   scene_graph (conceptagent_ros/SceneGraph)       at publish_rate and just after every recorded
             skill, with perception's aliases (ids fused into other objects, which skills resolve);
             none before the first perceived_graph (an empty graph would say "nothing here" before
             the robot has looked) -- what the planner and robot_skills read (not per perceived
             graph: a camera-rate graph of every object would cost more to send than the planner gains)
             perception/forget (std_msgs/String)            what the gripper took, so the map lets it go
Services:    get_scene_graph (conceptagent_ros/GetSceneGraph)
             record_skill_outcome (conceptagent_ros/RecordSkillOutcome): robot_skills calls it as each
             skill ends and before answering the planner, so every scene_graph stamped after a skill's
             `finished` already knows what it did -- and where the robot stands after it: a graph after
             a recorded skill (or a reset) waits, up to pose_wait, for a pose stamped after the record
             (after a reset, for as long as it takes; an unstamped pose is taken as current)
             scene_graph/reset (std_srvs/Trigger): forget what the skills did (a new run)
Parameters:  map (string, ""): a scene YAML or built-in scene whose rooms are the map (objects in it are
             ignored); "" -- no rooms; reach (double, 1.0 m); reach_to (string, centre): what reach is
             measured to, from the base -- centre (each thing's box middle, as the embedded world
             measures) or edge (the nearest point of its footprint, as an arm reaching for some of it
             does: the physical body's); pose_source (topic | tf);
             pose_topic (robot_pose); pose_type (PoseStamped | Odometry); world_frame (map);
             base_frame (base_link); publish_rate (double, 10 Hz); pose_wait (double, 1.0 s)
"""
from __future__ import annotations

import threading
import time
from typing import Any

from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.planning.robot_belief import REACH_TO, RobotBelief
from conceptagent_ros.ros.conversions.scene import (
    graph_to_msg,
    pose_position,
    pose_yaw,
    resolve_alias,
    scene_object_from_msg,
    stamp_ns,
)
from conceptagent_ros.ros.conversions.skills import call_from_msg
from conceptagent_ros.ros.spin import run_node
from conceptagent_ros.scene.model import Room
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.robot_memory import Perceived, SkillMemory
from conceptagent_ros.skills.contract import SkillCall
from conceptagent_ros.srv import GetSceneGraph, RecordSkillOutcome

RECORD_PUBLISH_DELAY_S = 0.03
HOLD_WARNING_S = 3.0  # a graph held this long after a reset for want of a pose is worth a warning



class SceneGraphNode(Node):
    __doc__ = __doc__

    def __init__(self, node_name: str = "scene_graph", namespace: str = "", **kwargs: object):
        super().__init__(node_name, namespace=namespace, **kwargs)
        d = ParameterDescriptor
        self.declare_parameter("map", "", d(description="scene YAML or built-in scene whose rooms are the map"))
        self.declare_parameter("reach", 1.0, d(description="metres the arm reaches from the base",
                                               floating_point_range=[FloatingPointRange(from_value=0.05, to_value=10.0)]))
        self.declare_parameter("reach_to", "centre", d(description="centre | edge: what reach is measured to"))
        self.declare_parameter("pose_source", "topic", d(description="topic | tf"))
        self.declare_parameter("pose_topic", "robot_pose", d(description="robot pose topic (pose_source topic)"))
        self.declare_parameter("pose_type", "PoseStamped", d(description="PoseStamped | Odometry"))
        self.declare_parameter("world_frame", "map", d(description="fixed frame"))
        self.declare_parameter("base_frame", "base_link", d(description="robot base frame (pose_source tf)"))
        self.declare_parameter("publish_rate", 10.0, d(description="scene_graph rate, Hz",
                                                      floating_point_range=[FloatingPointRange(from_value=0.1, to_value=100.0)]))
        self.declare_parameter("pose_wait", 1.0, d(description="seconds a graph after a skill waits for a pose taken after it",
                                                   floating_point_range=[FloatingPointRange(from_value=0.0, to_value=10.0)]))
        reach_to = self.get_parameter("reach_to").value
        if reach_to not in REACH_TO:
            raise ConceptAgentError(f"reach_to must be centre or edge, not {reach_to!r}")
        self.belief = RobotBelief(self._load_rooms(self.get_parameter("map").value), self.get_parameter("reach").value,
                                  reach_to)
        self.perceived: SceneGraph | None = None
        self.position: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self.yaw = 0.0
        self.pose_stamp_ns = 0  # of the pose last taken; 0: unstamped
        # After a recorded skill or a reset, no graph goes out with a pose from before it (the robot
        # may have moved): (clock ns a pose must not predate, monotonic s since, how long to wait at
        # most -- None: until one comes) until one arrives
        self._pose_due: tuple[int, float, float | None] | None = None
        self._reset_pending = False  # reset, and nothing perceived since
        self._lock = threading.Lock()
        group = ReentrantCallbackGroup()
        reliable = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        self.graph_pub = self.create_publisher(SceneGraph, "scene_graph", reliable)
        self.forget_pub = self.create_publisher(String, "perception/forget", 10)
        self.create_subscription(SceneGraph, "perceived_graph", self._on_perceived, reliable, callback_group=group)
        self._tf = self._tf_buffer() if self.get_parameter("pose_source").value == "tf" else None
        if self._tf is None:
            self._subscribe_pose(group)
        self.create_service(GetSceneGraph, "get_scene_graph", self._get_graph, callback_group=group)
        self.create_service(RecordSkillOutcome, "record_skill_outcome", self._record, callback_group=group)
        self.create_service(Trigger, "scene_graph/reset", self._reset, callback_group=group)
        self.create_timer(1.0 / self.get_parameter("publish_rate").value, self.publish_graph, callback_group=group)
        self.get_logger().info(f"scene graph: {len(self.rooms)} rooms, pose from {self.get_parameter('pose_source').value}")

    # -- inputs ------------------------------------------------------------------------------------------
    @staticmethod
    def _load_rooms(name: str) -> dict[str, Room]:
        if not name:
            return {}
        from conceptagent_ros.scene.loader import load_scene

        return dict(load_scene(name).rooms)

    def _tf_buffer(self) -> Any:
        try:  # not pip-installable: TF where ROS is installed
            from tf2_ros import Buffer, TransformListener
        except ImportError:
            self.get_logger().warning("pose_source tf but tf2_ros is not installed: reading the pose topic instead")
            return None
        buffer = Buffer()
        self._tf_listener = TransformListener(buffer, self)
        return buffer

    def _subscribe_pose(self, group: ReentrantCallbackGroup) -> None:
        kind = self.get_parameter("pose_type").value
        topic = self.get_parameter("pose_topic").value
        if kind == "Odometry":
            from nav_msgs.msg import Odometry

            self.create_subscription(Odometry, topic, lambda m: self._on_pose(m.pose.pose, m.header.stamp), 10,
                                     callback_group=group)
        elif kind == "PoseStamped":
            self.create_subscription(PoseStamped, topic, lambda m: self._on_pose(m.pose, m.header.stamp), 10,
                                     callback_group=group)
        else:
            raise ConceptAgentError(f"pose_type must be PoseStamped or Odometry, not {kind!r}")

    def _on_pose(self, pose: Any, stamp: Any) -> None:
        with self._lock:
            self.position, self.yaw, self.pose_stamp_ns = pose_position(pose), pose_yaw(pose), stamp_ns(stamp)
            waited_for = self._pose_due is not None and self._pose_is_current()
        if waited_for:  # the graph held back for this pose goes out now, not at the next tick
            self.publish_graph()

    def _pose_from_tf(self) -> None:
        if self._tf is None:
            return
        from rclpy.time import Time

        try:
            t = self._tf.lookup_transform(self.get_parameter("world_frame").value,
                                          self.get_parameter("base_frame").value, Time())
        except Exception as e:  # tf2 raises several lookup errors; each means no pose yet
            self.get_logger().warning(f"no robot pose from TF: {e}", throttle_duration_sec=5.0)
            return
        tr, q = t.transform.translation, t.transform.rotation
        from conceptagent_ros.scene.geometry import quaternion_to_yaw

        with self._lock:
            self.position, self.yaw = (tr.x, tr.y, tr.z), quaternion_to_yaw(q.x, q.y, q.z, q.w)
            self.pose_stamp_ns = stamp_ns(t.header.stamp)

    def _pose_is_current(self) -> bool:
        """No pose is awaited, or the last one was taken after what it was awaited for (called locked)."""
        if self._pose_due is None or self.pose_stamp_ns == 0 or self.pose_stamp_ns >= self._pose_due[0]:
            self._pose_due = None
            return True
        return False

    def _await_pose(self, at_most: float | None) -> None:
        """Graphs from now on wait for a pose taken from now on, for `at_most` seconds (None: until
        one comes) (called locked)."""
        self._pose_due = (self.get_clock().now().nanoseconds, time.monotonic(), at_most)

    def _on_perceived(self, msg: SceneGraph) -> None:
        with self._lock:
            if self._reset_pending:
                # The first view after a reset: a pose from before it may still be of the last run (a
                # stand-in reset after this node moves its robot then), one after it is of this run
                self._reset_pending = False
                self._await_pose(None)
            self.perceived = msg

    # -- the graph ---------------------------------------------------------------------------------------
    @property
    def rooms(self) -> dict[str, Room]:
        return self.belief.rooms

    @property
    def memory(self) -> SkillMemory:
        return self.belief.memory

    def _vocabulary(self) -> set[str]:
        perceived = self.perceived
        words = set(perceived.vocabulary) | {o.label for o in perceived.objects} if perceived is not None else set()
        return {w.replace(" ", "_") for w in words} | self.belief.room_words()

    def _perceived_objects(self) -> list[Perceived]:
        if self.perceived is None:
            return []
        return [Perceived(scene_object_from_msg(o), (o.size.x, o.size.y), pose_yaw(o.pose)) for o in self.perceived.objects]

    def _observation(self) -> Observation:
        return self.belief.observation(self._perceived_objects(), self.position)

    def graph_msg(self) -> SceneGraph:
        """The graph now, with the pose last taken (publish_graph and _get_graph look TF up first)."""
        with self._lock:
            return self._graph_msg()

    def _graph_msg(self) -> SceneGraph:
        """graph_msg, called locked."""
        msg = graph_to_msg(self._observation(), self.rooms, self._vocabulary(), self.get_clock().now().to_msg(),
                           self.get_parameter("world_frame").value, self.yaw)
        if self.perceived is not None:  # ids perception fused away, for whoever holds them
            msg.aliases = list(self.perceived.aliases)
        return msg

    def publish_graph(self) -> None:
        # Nothing until perception has spoken (at start and after a reset): an empty graph would tell
        # the planner "nothing here" before the robot has looked
        if self.perceived is None:
            return
        self._pose_from_tf()
        with self._lock:
            if not self._pose_is_current():
                assert self._pose_due is not None
                _, since, at_most = self._pose_due
                if at_most is None:  # a new run: the last run's pose says nothing of where the robot is
                    if time.monotonic() - since > HOLD_WARNING_S:
                        self.get_logger().warning("holding the scene graph: no robot pose since the reset",
                                                  throttle_duration_sec=5.0)
                    return
                if time.monotonic() - since < at_most:
                    return  # the planner waits for a graph after the skill; this one's pose may predate it
                self._pose_due = None
                self.get_logger().warning("no robot pose taken after the last skill within pose_wait: the scene "
                                          "graph shows the pose last received", throttle_duration_sec=10.0)
            # stamped in the same hold as the check: a skill recorded between the two (the service
            # runs beside this timer) would otherwise get a graph stamped after it with the pose
            # from before it
            msg = self._graph_msg()
        self.graph_pub.publish(msg)

    def _get_graph(self, _request: GetSceneGraph.Request, response: GetSceneGraph.Response) -> GetSceneGraph.Response:
        self._pose_from_tf()
        response.graph = self.graph_msg()
        return response

    # -- what the skills did -----------------------------------------------------------------------------
    def _record(self, request: RecordSkillOutcome.Request,
                response: RecordSkillOutcome.Response) -> RecordSkillOutcome.Response:
        call = call_from_msg(request.call)
        with self._lock:  # what a fused-away id names now: the skill acted on that object
            call = SkillCall(call.skill, tuple(resolve_alias(self.perceived, a) for a in call.args))
        if not request.success:
            response.recorded, response.message = True, f"{call} failed: nothing changed"
            return response
        try:
            with self._lock:
                forget = self.belief.record(call, self._perceived_objects(), self.position, self._vocabulary())
                self._await_pose(self.get_parameter("pose_wait").value)
        except ConceptAgentError as e:
            response.recorded, response.message = False, f"{call}: {e}"
            return response
        for oid in forget:
            self.forget_pub.publish(String(data=oid))
        # The skill's `finished` is stamped once this answer is back; a graph a moment later is the
        # one the planner waits for (else the next tick of publish_rate serves it)
        def publish_once() -> None:
            once.cancel()
            self.destroy_timer(once)
            self.publish_graph()

        # started only once `once` names it: on a multi-threaded executor it could fire before the
        # assignment (a loaded machine holds this thread past the delay) and find no timer to cancel
        once = self.create_timer(RECORD_PUBLISH_DELAY_S, publish_once, autostart=False)
        once.reset()
        response.recorded = True
        response.message = f"{call} recorded; holding {self.memory.holding or 'nothing'}"
        return response

    def _reset(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """A new run: what the skills did is forgotten, the map's rooms are read again (`map` may have
        changed) and nothing is perceived until perception says so."""
        try:
            rooms = self._load_rooms(self.get_parameter("map").value)
        except ConceptAgentError as e:
            response.success, response.message = False, str(e)
            return response
        with self._lock:
            self.belief.clear(rooms)
            self.perceived = None
            self._reset_pending, self._pose_due = True, None  # the robot may stand elsewhere now
        response.success, response.message = True, f"skill memory cleared; {len(rooms)} rooms"
        return response


def main(args: list[str] | None = None) -> None:
    run_node(SceneGraphNode, threads=1, args=args)  # no callback blocks
