"""The embedded robot with a camera: the agent observes through the fused 3D object map built from
synthetic RGB-D frames instead of reading the world's ground truth (`run --perception camera`).

On every observation the robot looks around on the spot (EmbeddedCamera), each frame goes through
the frame pipeline into the map, and the map (not the world) says what there is, where, and what
stands on or in what. The world stays the judge and the executor: a skill call names map objects,
which are resolved to the world's things by where they are. The ROS robot stand-in uses the same
camera; the scene graph node (ros/scene_graph_node.py) builds the planner's graph there, from the
perception node's objects. Perceived ids are resolved to the world's things by sim/perceived_ids.py,
on both paths.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from conceptagent_ros.perception.detections import Detector
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.fusion import ObjectMap
from conceptagent_ros.perception.pipeline import FramePipeline
from conceptagent_ros.scene.house_geometry import Box, free_station, layout
from conceptagent_ros.scene.loader import category_defaults
from conceptagent_ros.scene.model import SceneObject, outermost_holder
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.sim.perceived_ids import PerceivedIdResolver, PerceivedThing, map_things
from conceptagent_ros.sim.rgbd_camera import DEFAULT_CAMERA, CameraConfig, RenderScene, turn_on_the_spot
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome


def in_plain_sight(world: World, obj: SceneObject) -> bool:
    """Could a camera in its room see it at all: not in the gripper, not lost, not inside something
    closed or held, not tucked away in a receptacle nobody searched."""
    if obj.id in world.lost or obj.id == world.robot.holding:
        return False
    return not world.enclosed(obj, in_hand=world.robot.holding)


class EmbeddedCamera:
    """The robot's RGB-D camera in the embedded world: one look around from where it stands."""

    def __init__(self, world: World, camera: CameraConfig = DEFAULT_CAMERA, seed: int = 0):
        self.world = world
        self.config = camera
        self.rng = np.random.default_rng(seed)
        self._render_cache: tuple[tuple[Box, ...], RenderScene] | None = None
        # Where things are: kept from one look to the next, so that what did not move stays put
        self.boxes: dict[str, Box] = layout(world.scene)
        self.views: list[tuple[float, float]] = []  # where the camera stood
        self.clock = 0.0

    def _render_scene(self) -> tuple[RenderScene, list[Box]]:
        world = self.world
        room = world.robot.room
        self.boxes = boxes = layout(world.scene, previous=self.boxes)
        shown = tuple(sorted((b for oid, b in boxes.items()
                              if world.scene.objects[oid].room == room and in_plain_sight(world, world.scene.objects[oid])),
                             key=lambda b: b.object_id))
        if self._render_cache is None or self._render_cache[0] != shown:
            self._render_cache = (shown, RenderScene(shown, world.scene.rooms.get(room)))
        return self._render_cache[1], [b for b in shown if b.on_floor]

    def look_around(self, stamp: Callable[[], float] | None = None) -> list[Frame]:
        """Every yaw at every pitch from a free spot in front of where the robot stands; `stamp`
        gives each frame its time (default: 30 Hz on a clock of the camera's own)."""
        scene, furniture = self._render_scene()
        room = self.world.scene.rooms.get(self.world.robot.room)
        x, y = self.world.robot.position[0], self.world.robot.position[1]
        if room is not None:
            x, y = free_station((x, y), room.bounds, furniture)
        self.views.append((x, y))
        frames = []
        for pose in turn_on_the_spot(x, y, self.config):
            self.clock += 1.0 / 30.0
            frames.append(scene.render(pose, self.config, self.rng, stamp=stamp() if stamp else self.clock))
        return frames


def observation_from(world: World, things: Sequence[PerceivedThing]) -> Observation:
    """The agent's observation from perceived things, the robot's own state (where it is, what its
    gripper holds, what it searched) and the state the last skill left the things it acted on in."""
    by_id = {t.id: t for t in things}
    touched = {w: dict(world.scene.objects[w].state) for w in world.touched if w in world.scene.objects}
    objects = []
    for thing in things:
        defaults = category_defaults().get(thing.label.replace(" ", "_"), {})
        state = {k: bool(v) for k, v in (defaults.get("state") or {}).items()}
        state.update(thing.state)
        if thing.hint in touched or thing.id in touched:
            state.update(touched.get(thing.hint or "", touched.get(thing.id, {})))
        # Reach is measured to what carries a thing, as the world measures it (a phone at the far
        # edge of a bed is reached from wherever the bed is): the outermost holder's box centre
        root = outermost_holder(by_id, thing)
        room = world.scene.room_at(root.centre[0], root.centre[1]) or world.robot.room
        objects.append(SceneObject(id=thing.id, category=thing.label, room=room,
                                   position=(root.centre[0], root.centre[1], thing.top),
                                   affordances=frozenset(defaults.get("affordances") or ()), state=state,
                                   parent=thing.parent if thing.parent in by_id else None))
    held = world.robot.holding
    if held is not None:
        objects.append(world.scene.objects[held])  # the gripper says what it holds
    receptacles = tuple(o.id for o in objects if o.has("receptacle") and o.room == world.robot.room
                        and (not o.has("openable") or o.flag("open")))
    return Observation(world.robot, tuple(objects), receptacles, tuple(sorted(world.searched)))


@dataclass
class PerceptionLog:
    frames: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


class PerceivingRobot:
    """RobotInterface over a World, seeing through a camera and a fused map."""

    def __init__(self, world: World, detector: Detector | None = None, camera: CameraConfig = DEFAULT_CAMERA,
                 object_map: ObjectMap | None = None, seed: int = 0,
                 frame_hook: Callable[[Frame], None] | None = None):
        from conceptagent_ros.perception.detectors.oracle import OracleDetector

        self.world = world
        self.camera = EmbeddedCamera(world, camera, seed)
        self.map = object_map or ObjectMap()
        self.detector = detector or OracleDetector(
            lambda name: world.scene.objects[name].category,
            lambda name: dict(world.scene.objects[name].state))
        self.pipeline = FramePipeline(self.detector, self.map)
        self.log = PerceptionLog()
        self.frame_hook = frame_hook
        self.ids = PerceivedIdResolver(world.scene, lambda: self.camera.boxes, lambda: world.robot.holding)

    @property
    def boxes(self) -> dict[str, Box]:
        return self.camera.boxes

    def look_around(self) -> list[Frame]:
        """One look around; every frame is fused into the map."""
        frames = self.camera.look_around()
        for frame in frames:
            report = self.pipeline.process(frame)
            for stage, s in report.seconds.items():
                self.log.seconds[stage] = self.log.seconds.get(stage, 0.0) + s
            self.log.frames += 1
            if self.frame_hook is not None:
                self.frame_hook(frame)
        return frames

    def things(self) -> list[PerceivedThing]:
        return map_things(self.map)

    def observe(self) -> Observation:
        held = self.world.robot.holding
        if held is not None:  # in the gripper, not where the map last saw it
            for thing in self.things():
                if self.ids.thing_of(thing) == held:
                    self.map.remove(thing.id)
        self.look_around()
        things = self.things()
        self.ids.remember(things)
        return observation_from(self.world, things)

    def resolve(self, name: str) -> str:
        return self.ids.resolve_name(name, {t.id: t for t in self.things()})

    def execute(self, call: SkillCall) -> SkillOutcome:
        outcome = self.world.execute(self.ids.resolve_call(call, self.things()))
        return SkillOutcome(call, outcome.success, outcome.message, outcome.failure)
