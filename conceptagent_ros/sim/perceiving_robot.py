"""The embedded robot with a camera: the agent observes through the fused 3D object map built from
synthetic RGB-D frames instead of reading the world's ground truth (`run --perception camera`).

On every observation the robot looks around on the spot (sim/rgbd_camera.py), each frame goes
through the frame pipeline into the map, and the map (not the world) says what there is, where,
and what stands on or in what. The world stays the judge and the executor: a skill call names
map objects, which are resolved to the world's things by where they are.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from conceptagent_ros.perception.detections import Detector
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.pipeline import FramePipeline
from conceptagent_ros.scene.fusion import MapObject, ObjectMap
from conceptagent_ros.scene.loader import category_defaults
from conceptagent_ros.scene.model import SceneObject
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.relations3d import spatial_relations
from conceptagent_ros.sim.household_geometry import Box, free_station, layout
from conceptagent_ros.sim.rgbd_camera import DEFAULT_CAMERA, CameraConfig, RenderScene, turn_on_the_spot
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome


def in_plain_sight(world: World, obj: SceneObject) -> bool:
    """Could a camera in its room see it at all: not in the gripper, not lost, not inside something
    closed, not tucked away in a receptacle nobody searched."""
    if obj.id in world.lost or obj.id == world.robot.holding:
        return False
    parent_id, child = obj.parent, obj
    while parent_id is not None and parent_id in world.scene.objects:
        parent = world.scene.objects[parent_id]
        if parent.has("openable") and not parent.flag("open"):
            return False
        if child.hidden and parent_id not in world.searched:
            return False
        if parent.id == world.robot.holding:
            return False
        child, parent_id = parent, parent.parent
    return True


@dataclass
class PerceptionLog:
    frames: int = 0
    views: list[tuple[float, float]] = field(default_factory=list)  # where the camera stood
    seconds: dict[str, float] = field(default_factory=dict)


class PerceivingRobot:
    """RobotInterface over a World, seeing through a camera and a fused map."""

    def __init__(self, world: World, detector: Detector | None = None, camera: CameraConfig = DEFAULT_CAMERA,
                 object_map: ObjectMap | None = None, seed: int = 0,
                 frame_hook: Callable[[Frame], None] | None = None):
        from conceptagent_ros.perception.detectors.oracle import OracleDetector

        self.world = world
        self.camera = camera
        self.map = object_map or ObjectMap()
        self.detector = detector or OracleDetector(
            lambda name: world.scene.objects[name].category,
            lambda name: dict(world.scene.objects[name].state))
        self.pipeline = FramePipeline(self.detector, self.map)
        self.rng = np.random.default_rng(seed)
        self.log = PerceptionLog()
        self.frame_hook = frame_hook
        self._render_cache: tuple[tuple[Box, ...], RenderScene] | None = None
        # Where things are: kept from one look to the next, so that what did not move stays put
        self.boxes: dict[str, Box] = layout(world.scene)
        self._clock = 0.0

    # -- seeing ---------------------------------------------------------------------------------
    def _render_scene(self) -> tuple[RenderScene, list[Box]]:
        world = self.world
        room = world.robot.room
        self.boxes = boxes = layout(world.scene, previous=self.boxes)
        shown = tuple(sorted((b for oid, b in boxes.items()
                              if world.scene.objects[oid].room == room and in_plain_sight(world, world.scene.objects[oid])),
                             key=lambda b: b.object_id))
        if self._render_cache is None or self._render_cache[0] != shown:
            self._render_cache = (shown, RenderScene(shown, world.scene.rooms.get(room)))
        floor_standing = [b for b in shown if b.center[2] - b.size[2] / 2 < 0.05]
        return self._render_cache[1], floor_standing

    def look_around(self) -> list[Frame]:
        """One look around from where the robot stands; every frame is fused into the map."""
        scene, furniture = self._render_scene()
        room = self.world.scene.rooms.get(self.world.robot.room)
        x, y = self.world.robot.position[0], self.world.robot.position[1]
        if room is not None:
            x, y = free_station((x, y), room.bounds, furniture)
        self.log.views.append((x, y))
        frames = []
        for pose in turn_on_the_spot(x, y, self.camera):
            self._clock += 1.0 / 30.0
            frame = scene.render(pose, self.camera, self.rng, stamp=self._clock)
            report = self.pipeline.process(frame)
            for stage, s in report.seconds.items():
                self.log.seconds[stage] = self.log.seconds.get(stage, 0.0) + s
            self.log.frames += 1
            if self.frame_hook is not None:
                self.frame_hook(frame)
            frames.append(frame)
        return frames

    def observe(self) -> Observation:
        held = self.world.robot.holding
        if held is not None:  # in the gripper, not where the map last saw it
            for oid in [oid for oid in self.map.objects if self.resolve(oid) == held]:
                self.map.remove(oid)
        self.look_around()
        objects = [self._scene_object(o, parents) for o, parents in self._with_parents()]
        if held is not None:
            objects.append(self.world.scene.objects[held])  # the gripper says what it holds
        receptacles = tuple(o.id for o in objects if o.has("receptacle") and o.room == self.world.robot.room
                            and (not o.has("openable") or o.flag("open")))
        return Observation(self.world.robot, tuple(objects), receptacles, tuple(sorted(self.world.searched)))

    def _with_parents(self) -> list[tuple[MapObject, dict[str, str]]]:
        parents = {r.subject: r.object for r in spatial_relations({oid: o.box for oid, o in self.map.objects.items()})
                   if r.relation in ("on", "in")}
        return [(o, parents) for o in self.map.objects.values()]

    def _scene_object(self, obj: MapObject, parents: dict[str, str]) -> SceneObject:
        defaults = category_defaults().get(obj.label, {})
        state = {k: bool(v) for k, v in (defaults.get("state") or {}).items()}
        state.update(obj.state)
        # Reach is measured to what carries a thing, as the world measures it (a phone at the far
        # edge of a bed is reached from wherever the bed is): the outermost holder's centre
        root, trail = obj, {obj.id}
        while parents.get(root.id) in self.map.objects and parents[root.id] not in trail:
            root = self.map.objects[parents[root.id]]
            trail.add(root.id)
        centre = root.box.center  # the box's middle, not the seen surface's (the near side of a bed)
        room = self.world.scene.room_at(float(centre[0]), float(centre[1])) or self.world.robot.room
        position = (float(centre[0]), float(centre[1]), float(obj.box.z_max))
        return SceneObject(id=obj.id, category=obj.label, room=room, position=position,
                           affordances=frozenset(defaults.get("affordances") or ()), state=state,
                           parent=parents.get(obj.id))

    # -- acting ---------------------------------------------------------------------------------
    def resolve(self, name: str) -> str:
        """The world's thing a map object is: the one the oracle named most often, else the nearest
        thing of the same kind to its centroid. Rooms and the world's own ids pass through."""
        if name in self.world.scene.rooms or name not in self.map.objects:
            return name
        obj = self.map.objects[name]
        if obj.hint_votes:
            return obj.hint_votes.most_common(1)[0][0]
        c = obj.centroid
        same = [o for o in self.world.scene.objects.values() if o.category == obj.label]
        if not same:
            return name
        return min(same, key=lambda o: math.dist(self.boxes[o.id].center, c)).id

    def execute(self, call: SkillCall) -> SkillOutcome:
        resolved = SkillCall(call.skill, tuple(self.resolve(a) for a in call.args))
        outcome = self.world.execute(resolved)
        return SkillOutcome(call, outcome.success, outcome.message, outcome.failure)
