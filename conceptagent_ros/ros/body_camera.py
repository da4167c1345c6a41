"""The physical household body's mast camera in the ROS graph (the manipulation node with perception
camera): every image the body takes -- on its looks around, before and after each skill -- goes to the
perception node as a camera driver's frame (ros/camera_streams.py), and the body waits until it is
fused, as a robot turns its head no faster than its perception keeps up. The planner's scene graph
is then the scene graph node's, built from the perception node's objects, the base's pose and the
skills' outcomes (recorded here as each skill ends, before its result goes out), as on a real robot.

Perception names what it fuses; a skill call names those ids; the body acts on the scene's things:
sim/perceived_ids.py resolves one to the other by where PyBullet has them now.
"""
from __future__ import annotations

import time
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node

from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.msg import SkillCall as SkillCallMsg
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.ros.camera_streams import CameraStreams, things_of
from conceptagent_ros.sim.perceived_ids import PerceivedIdResolver
from conceptagent_ros.skills.contract import SkillCall
from conceptagent_ros.srv import RecordSkillOutcome

OUTCOME_WAIT_S = 2.0
POLL_S = 0.005


class BodyCamera:
    def __init__(self, node: Node, body: Any, group: CallbackGroup, world_frame: str, frame_timeout: float):
        """`body`: a HouseholdBody (its frame_sink is set here); `frame_timeout`: the longest wait, in
        seconds, for one frame to be fused."""
        self.node, self.body, self.frame_timeout = node, body, frame_timeout
        self.streams = CameraStreams(node, group, world_frame, self._on_perceived)
        scene = body.scene
        self.ids = PerceivedIdResolver(scene, body.positions,
                                       lambda: body.held.object_id if body.held is not None else None)
        self.streams.name_instances([(oid, scene.objects[oid].category) for oid in body.instance_names])
        self.outcomes = node.create_client(RecordSkillOutcome, "record_skill_outcome", callback_group=group)
        self.frames = 0  # sent to the perception node
        self.unfused = 0  # of those, not fused within frame_timeout
        body.frame_sink = self.send

    def _on_perceived(self, msg: SceneGraph) -> None:
        self.ids.remember(things_of(msg))

    def ready(self) -> bool:
        """The perception node hears every stream, and the scene graph node takes skill outcomes."""
        return self.streams.streams_matched() and self.outcomes.service_is_ready()

    def send(self, frame: Frame) -> None:
        """One image to the perception node; back once it is fused (or frame_timeout has passed)."""
        if not self.streams.perception_listens():
            self.node.get_logger().warning("perception camera, but no perception node subscribes to rgb",
                                           throttle_duration_sec=10.0)
            return
        assert frame.instance_ids is not None
        sent = self.streams.publish(frame, frame.instance_ids)
        self.frames += 1
        deadline = time.monotonic() + self.frame_timeout
        while not self.streams.fused(sent):
            if time.monotonic() > deadline:
                self.unfused += 1
                self.node.get_logger().warning(f"a frame was not fused within {self.frame_timeout:.1f} s",
                                               throttle_duration_sec=10.0)
                return
            time.sleep(POLL_S)

    def resolve(self, call: SkillCall) -> SkillCall:
        """Perceived ids in `call` as the scene's things (where PyBullet has them now)."""
        perceived = self.streams.perceived
        current = self.ids.not_held(things_of(perceived)) if perceived is not None else []
        return self.ids.resolve_call(call, current)

    def record(self, call: SkillCallMsg, success: bool) -> None:
        """As robot_skills does on a robot: the scene graph node hears what the skill did before the
        planner hears the result."""
        if not self.outcomes.service_is_ready():
            self.node.get_logger().warning("no scene graph node records skill outcomes", throttle_duration_sec=10.0)
            return
        future = self.outcomes.call_async(RecordSkillOutcome.Request(call=call, success=success))
        deadline = time.monotonic() + OUTCOME_WAIT_S
        while not future.done() and time.monotonic() < deadline:
            time.sleep(POLL_S)
