"""Perception: RGB-D frames with camera poses in, a live open-vocabulary 3D object map out.

A lifecycle node: the detector, segmenter and embedder load in on_configure (config/perception.yaml
or the `config` parameter) and are freed in on_cleanup; frames are only processed while active.
With autostart (default) main() configures and activates it.

Subscribes:  rgb (sensor_msgs/Image), depth (sensor_msgs/Image, 16UC1 mm or 32FC1 m), camera_info
             (sensor_msgs/CameraInfo) -- sensor QoS, depth 1: under a flood of frames it drops, it
             never queues; colour and depth paired by approximate time (message_filters where
             installed, an equivalent of our own where not)
             camera pose: from TF (pose_source=tf: `world_frame` -> the image's frame at its stamp,
             tf2_ros where installed) or from a topic (pose_source=topic: `pose` as PoseStamped or
             Odometry, nearest in time)
Publishes:   perceived_graph (conceptagent_ros/SceneGraph)  the fused objects and their on/in/near
             detections (conceptagent_ros/ObjectDetections) each frame's detections
             perception_markers (visualization_msgs/MarkerArray) boxes, labels and relations for rviz
             instances (sensor_msgs/Image 32SC1) + instance_names (std_msgs/String, latched, JSON [[id, label], ...]:
             what each instance id means)
             with detector=oracle: a simulator's segmentation camera (the robot stand-in's, Gazebo's)
Services:    perception/query_objects (QueryObjects)   text -> objects, best first, with scores
             perception/get_scene_graph (GetSceneGraph)
             perception/reset (std_srvs/Trigger)        forget every object
             perception/get_object_points (GetObjectPoints)  the map's points of objects (PointCloud2 each),
                                                        what the manipulation planners work on
Also:        perception/forget (std_msgs/String)         an object id a gripper took: removed from the map
Parameters:  config (string, ""): perception YAML; detector (string, ""): override its detector kind;
             vocabulary (string[]): what to look for (default: the config's); pose_source (tf | topic);
             pose_type (PoseStamped | Odometry); pose_frame (optical | link); world_frame (string, map);
             slop (double, 0.05 s); max_pose_gap (double, 0.2 s); pose_wait (double, 0.5 s: how long a
             frame waits for camera_info and its pose); autostart (bool, true)
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

import numpy as np
from geometry_msgs.msg import Point, PoseStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.duration import Duration
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rclpy.time import Time
from sensor_msgs.msg import CameraInfo, Image
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import ObjectDetection, ObjectDetections, SceneGraph
from conceptagent_ros.perception.frames import Frame, Intrinsics
from conceptagent_ros.perception.fusion import ObjectMap
from conceptagent_ros.perception.object_query import query_objects
from conceptagent_ros.perception.pipeline import FramePipeline
from conceptagent_ros.perception.ros_images import camera_info_intrinsics, image_to_numpy, pose_to_matrix, stamp_seconds
from conceptagent_ros.perception.sync import ApproximateSync, nearest
from conceptagent_ros.ros.conversions.clouds import xyz_cloud
from conceptagent_ros.ros.conversions.perception import map_markers, map_to_graph_msg
from conceptagent_ros.ros.spin import autostart_lifecycle, run_node
from conceptagent_ros.srv import GetObjectPoints, GetSceneGraph, QueryObjects


class PerceptionNode(LifecycleNode):
    __doc__ = __doc__

    def __init__(self, node_name: str = "perception", namespace: str = "", **kwargs: Any):
        super().__init__(node_name, namespace=namespace, **kwargs)
        d = ParameterDescriptor
        self.declare_parameter("config", "", d(description="perception YAML (default config/perception.yaml)"))
        self.declare_parameter("detector", "", d(description="detector kind, overriding the config's"))
        self.declare_parameter("vocabulary", [""], d(description="what to look for (default: the config's)"))
        self.declare_parameter("pose_source", "topic", d(description="tf | topic"))
        self.declare_parameter("pose_type", "PoseStamped", d(description="PoseStamped | Odometry (pose_source=topic)"))
        self.declare_parameter("pose_frame", "optical", d(description="optical | link: what the pose is of"))
        self.declare_parameter("world_frame", "map", d(description="fixed frame of the map"))
        self.declare_parameter("slop", 0.05, d(description="seconds colour and depth may differ"))
        self.declare_parameter("max_pose_gap", 0.2, d(description="seconds between a frame and its pose"))
        self.declare_parameter("pose_wait", 0.5, d(description="seconds a frame waits for camera_info and its pose"))
        self.declare_parameter("autostart", True, d(description="configure and activate at start"))
        self.pipeline: FramePipeline | None = None
        self.oracle = False
        self.instance_labels: dict[str, str] = {}
        self.instance_names: tuple[str, ...] = ()
        self.embedder: Any = None
        self.intrinsics: Intrinsics | None = None
        self.poses: deque[tuple[float, np.ndarray]] = deque(maxlen=200)
        self.frames = 0
        self.dropped = 0
        self.busy_seconds = 0.0
        self.latest_stamp: Any = None
        self._lock = threading.Lock()
        # Camera info and odometry arrive on their own topics, in their own callbacks: a frame can be
        # taken up before them (a loaded machine, a lagging odometry); it waits for them (pose_wait)
        self._arrived = threading.Condition(self._lock)
        self._active = False
        self._sync: Any = None
        self._tf: Any = None
        reliable = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        # One group for the images (a frame is processed while the next ones wait in DDS, depth 1) and
        # for what changes the map beside them
        self._images = MutuallyExclusiveCallbackGroup()
        self.graph_pub = self.create_publisher(SceneGraph, "perceived_graph", reliable)
        self.detections_pub = self.create_publisher(ObjectDetections, "detections", 5)
        self.marker_pub = self.create_publisher(MarkerArray, "perception_markers", 1)
        services = ReentrantCallbackGroup()
        self.create_service(QueryObjects, "perception/query_objects", self._query, callback_group=services)
        self.create_service(GetSceneGraph, "perception/get_scene_graph", self._get_graph, callback_group=services)
        self.create_service(Trigger, "perception/reset", self._reset, callback_group=services)
        self.create_service(GetObjectPoints, "perception/get_object_points", self._object_points,
                            callback_group=services)
        from std_msgs.msg import String

        self.create_subscription(String, "perception/forget", self._forget, 10, callback_group=self._images)
        # One group for the images: a frame is processed while the next ones wait in DDS (depth 1)
        self._subs: list[Any] = []

    # -- lifecycle -------------------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        from conceptagent_ros.perception.config import build_detector, build_embedder, build_segmenter, load_perception_spec

        try:
            spec = load_perception_spec(self.get_parameter("config").value or None)
            kind = self.get_parameter("detector").value
            if kind:
                spec = spec.model_copy(update={"detector": spec.detector.model_copy(update={"kind": kind})})
            vocabulary = [v for v in self.get_parameter("vocabulary").value if v] or spec.vocabulary
            self.embedder = build_embedder(spec)
            self.oracle = spec.detector.kind == "oracle"
            detector = self._oracle(spec.detector.min_pixels) if self.oracle else build_detector(spec)
            self.pipeline = FramePipeline(detector, ObjectMap(spec.fusion_config()), build_segmenter(spec),
                                          self.embedder, spec.geometry_config(), [] if self.oracle else vocabulary)
        except (ConceptAgentError, ImportError) as e:
            self.get_logger().error(f"perception models not loaded: {e}")
            return TransitionCallbackReturn.FAILURE
        self.get_logger().info(f"perception: {spec.detector.kind} detector, {spec.segmenter.kind} segmenter, "
                               f"{spec.embedder.kind} embedder, {len(vocabulary)} words")
        return TransitionCallbackReturn.SUCCESS

    def _oracle(self, min_pixels: int) -> Any:
        """A simulator's segmentation camera: instance ids per pixel (instances, 32SC1) and what each
        id is (instance_names, JSON {"index": [id, label]...}), as Gazebo or the stand-in publish them."""
        from conceptagent_ros.perception.detectors.oracle import OracleDetector

        return OracleDetector(lambda name: self.instance_labels.get(name, "object"), min_pixels=min_pixels)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        sensor = qos_profile_sensor_data  # best effort, keep last 5...
        sensor = QoSProfile(depth=1, reliability=sensor.reliability, durability=sensor.durability)  # ...made depth 1
        self._subs.append(self.create_subscription(CameraInfo, "camera_info", self._camera_info, sensor))
        if self.get_parameter("pose_source").value == "topic":
            kind = PoseStamped if self.get_parameter("pose_type").value == "PoseStamped" else Odometry
            self._subs.append(self.create_subscription(kind, "pose", self._pose, 20))
        else:
            self._tf = _tf_buffer(self)
        self._subscribe_images(sensor)
        self._active = True
        return super().on_activate(state)

    def _subscribe_images(self, qos: QoSProfile) -> None:
        """Colour and depth (and, for the oracle, the instance image) paired by approximate time."""
        slop = float(self.get_parameter("slop").value)
        topics = ["rgb", "depth"]
        if self.oracle:
            from std_msgs.msg import String

            latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self._subs.append(self.create_subscription(String, "instance_names", self._on_names, latched))
            topics.append("instances")
        try:
            import message_filters  # not pip-installable; present in a ROS install

            subs = [message_filters.Subscriber(self, Image, t, qos_profile=qos, callback_group=self._images) for t in topics]
            self._sync = message_filters.ApproximateTimeSynchronizer(subs, queue_size=2, slop=slop)
            self._sync.registerCallback(self._on_pair)
            self._subs += subs
        except ImportError:
            self._sync = ApproximateSync(len(topics), self._on_pair, slop=slop, queue_size=2)
            for index, topic in enumerate(topics):
                self._subs.append(self.create_subscription(
                    Image, topic, lambda m, i=index: self._sync.add(i, stamp_seconds(m.header), m), qos,
                    callback_group=self._images))

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._active = False
        for sub in self._subs:
            if hasattr(sub, "sub"):  # message_filters.Subscriber
                self.destroy_subscription(sub.sub)
            else:
                self.destroy_subscription(sub)
        self._subs = []
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.pipeline, self.embedder = None, None
        return TransitionCallbackReturn.SUCCESS

    def _vocabulary(self) -> list[str]:
        """What this node can name: the words it looks for, or with the oracle every label the
        simulator's segmentation camera has (the planner types goals by them)."""
        assert self.pipeline is not None
        return sorted(set(self.instance_labels.values())) if self.oracle else list(self.pipeline.vocabulary)

    # -- input -----------------------------------------------------------------------------------------
    def _on_names(self, msg: Any) -> None:
        import json

        try:
            entries = json.loads(msg.data)
            self.instance_names = tuple(str(e[0]) for e in entries)
            self.instance_labels = {str(e[0]): str(e[1]) for e in entries}
        except (ValueError, TypeError, IndexError) as e:
            self.get_logger().error(f"instance_names ignored: {e}", throttle_duration_sec=5.0)

    def _camera_info(self, msg: CameraInfo) -> None:
        try:
            intrinsics = camera_info_intrinsics(msg)
        except ValueError as e:
            self.get_logger().error(f"camera_info ignored: {e}", throttle_duration_sec=5.0)
            return
        with self._arrived:
            self.intrinsics = intrinsics
            self._arrived.notify_all()

    def _pose(self, msg: Any) -> None:
        try:
            matrix = pose_to_matrix(msg, self.get_parameter("pose_frame").value)
        except ValueError as e:
            self.get_logger().error(f"pose ignored: {e}", throttle_duration_sec=5.0)
            return
        with self._arrived:
            self.poses.append((stamp_seconds(msg.header), matrix))
            self._arrived.notify_all()

    def _pose_at(self, stamp: float, frame_id: str, deadline: float) -> np.ndarray | None:
        """The camera's pose at `stamp`, waiting for it until `deadline` (time.monotonic()); None if
        it does not come."""
        if self._tf is not None:
            try:
                t = self._tf.lookup_transform(self.get_parameter("world_frame").value, frame_id,
                                              Time(seconds=stamp).to_msg(),
                                              timeout=Duration(seconds=max(0.0, deadline - time.monotonic())))
            except Exception as e:  # tf2 raises several lookup errors; each means no pose for this frame
                self.get_logger().warning(f"no camera pose from TF: {e}", throttle_duration_sec=5.0)
                return None
            return pose_to_matrix(t, "optical")
        gap = float(self.get_parameter("max_pose_gap").value)
        with self._arrived:
            while True:
                matrix, later = self._nearest_pose(stamp, gap)
                remaining = deadline - time.monotonic()
                if matrix is not None or later or remaining <= 0:
                    return matrix
                self._arrived.wait(remaining)

    def _nearest_pose(self, stamp: float, gap: float) -> tuple[np.ndarray | None, bool]:
        """(the pose within `gap` of `stamp`, or None; whether a pose past that gap has come, after
        which the one sought will not). Called with the lock held."""
        if not self.poses:
            return None, False
        stamps = [s for s, _ in self.poses]
        order = np.argsort(stamps)
        i = nearest([stamps[j] for j in order], stamp)
        s, matrix = self.poses[int(order[i])]
        return (matrix if abs(s - stamp) <= gap else None), max(stamps) > stamp + gap

    def _on_pair(self, rgb_msg: Image, depth_msg: Image, instances_msg: Image | None = None) -> None:
        if not self._active or self.pipeline is None:
            return
        deadline = time.monotonic() + float(self.get_parameter("pose_wait").value)  # for camera_info and pose
        with self._arrived:
            self._arrived.wait_for(lambda: self.intrinsics is not None, deadline - time.monotonic())
        if self.intrinsics is None:
            self.get_logger().warning("frames wait for camera_info", throttle_duration_sec=5.0)
            return
        stamp = stamp_seconds(rgb_msg.header)
        pose = self._pose_at(stamp, rgb_msg.header.frame_id, deadline)
        if pose is None:
            self.dropped += 1
            self.get_logger().warning("a frame without a camera pose was dropped", throttle_duration_sec=5.0)
            return
        start = time.perf_counter()
        try:
            frame = Frame(image_to_numpy(rgb_msg), image_to_numpy(depth_msg), self.intrinsics, pose, stamp,
                          rgb_msg.header.frame_id)
            if instances_msg is not None:
                frame.instance_ids = _int32_image(instances_msg)
                frame.instance_names = self.instance_names
            report = self.pipeline.process(frame)
        except ValueError as e:
            self.dropped += 1
            self.get_logger().error(f"frame dropped: {e}", throttle_duration_sec=5.0)
            return
        self.busy_seconds += time.perf_counter() - start
        self.frames += 1
        self.latest_stamp = rgb_msg.header.stamp
        self._publish(rgb_msg.header.stamp, report)

    # -- output ----------------------------------------------------------------------------------------
    def _publish(self, stamp: Any, report: Any) -> None:
        assert self.pipeline is not None
        frame_id = self.get_parameter("world_frame").value
        with self._lock:
            graph = map_to_graph_msg(self.pipeline.map, stamp, frame_id, self._vocabulary())
            markers = map_markers(self.pipeline.map, stamp, frame_id)
        self.graph_pub.publish(graph)
        self.marker_pub.publish(markers)
        dets = ObjectDetections()
        dets.header.stamp, dets.header.frame_id = stamp, frame_id
        for det in report.last_detections:
            d = ObjectDetection(label=det.label, score=float(det.score), x0=float(det.box[0]), y0=float(det.box[1]),
                                x1=float(det.box[2]), y1=float(det.box[3]))
            c = det.centroid if det.centroid is not None else (float("nan"),) * 3
            d.centroid = Point(x=float(c[0]), y=float(c[1]), z=float(c[2]))
            dets.detections.append(d)
        self.detections_pub.publish(dets)

    def _query(self, request: QueryObjects.Request, response: QueryObjects.Response) -> QueryObjects.Response:
        if self.pipeline is None or not request.text.strip():
            return response
        limit = request.max_results or max(1, len(self.pipeline.map.objects))
        with self._lock:
            hits = query_objects(list(self.pipeline.map.objects.values()), request.text, self.embedder, top_k=limit)
            graph = map_to_graph_msg(self.pipeline.map, self.get_clock().now().to_msg(),
                                     self.get_parameter("world_frame").value, self._vocabulary())
        by_id = {o.id: o for o in graph.objects}
        response.objects = [by_id[h.id] for h in hits if h.id in by_id]
        response.scores = [float(h.score) for h in hits if h.id in by_id]
        return response

    def _object_points(self, request: GetObjectPoints.Request,
                       response: GetObjectPoints.Response) -> GetObjectPoints.Response:
        """Each asked-for object's fused points (an id fused away since answers as the object it
        joined); every object's when none is asked for."""
        if self.pipeline is None:
            response.success, response.message = False, "perception is not configured (no models loaded)"
            return response
        frame, stamp = self.get_parameter("world_frame").value, self.latest_stamp or self.get_clock().now().to_msg()
        unknown = []
        with self._lock:
            objects = self.pipeline.map.objects
            for oid in list(request.ids) or sorted(objects):
                live = self.pipeline.map.resolve(oid)
                if live not in objects:
                    unknown.append(oid)
                    continue
                response.ids.append(live)
                response.labels.append(objects[live].label)
                response.clouds.append(xyz_cloud(objects[live].points, frame, stamp))
            held = len(objects)
        response.success = not unknown
        response.message = (f"not in the map: {', '.join(unknown)} (it holds {held} objects)" if unknown
                            else f"{len(response.ids)} of the map's {held} objects")
        return response

    def _forget(self, msg: Any) -> None:
        """A manipulator took this object: it is in a gripper now, not where the map saw it."""
        if self.pipeline is not None and self.pipeline.map.remove(msg.data) is not None:
            self.get_logger().info(f"forgot {msg.data}: it was picked up")

    def _reset(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """Forget every object (a new world, or a map gone wrong); the models stay loaded."""
        if self.pipeline is not None:
            with self._lock:
                self.pipeline.map = ObjectMap(self.pipeline.map.config)
        response.success, response.message = True, "object map cleared"
        return response

    def _get_graph(self, _request: GetSceneGraph.Request, response: GetSceneGraph.Response) -> GetSceneGraph.Response:
        if self.pipeline is not None:
            with self._lock:
                response.graph = map_to_graph_msg(self.pipeline.map, self.latest_stamp or self.get_clock().now().to_msg(),
                                                  self.get_parameter("world_frame").value, self._vocabulary())
        return response


def _int32_image(msg: Image) -> np.ndarray:
    if msg.encoding.lower() != "32sc1":
        raise ValueError(f"instance image must be 32SC1, not {msg.encoding}")
    data = np.frombuffer(bytes(msg.data), dtype=">i4" if msg.is_bigendian else "<i4")
    return data.reshape(msg.height, msg.step // 4)[:, : msg.width].astype(np.int32)


def _tf_buffer(node: LifecycleNode) -> Any:
    try:  # not pip-installable: TF where ROS is installed
        from tf2_ros import Buffer, TransformListener
    except ImportError as e:
        raise ConceptAgentError("pose_source=tf needs tf2_ros (a ROS install); on pip use pose_source=topic") from e
    buffer = Buffer()
    node._tf_listener = TransformListener(buffer, node)  # type: ignore[attr-defined]  # kept alive with the node
    return buffer


def main(args: list[str] | None = None) -> None:
    run_node(PerceptionNode, threads=3, args=args, before_spin=autostart_lifecycle)
