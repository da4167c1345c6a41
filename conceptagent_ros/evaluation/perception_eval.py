"""How good is the fused map: a camera trajectory through a built-in scene, and the map scored
against the world's truth.

The judge reads only the simulator: the boxes the camera rendered and the per-pixel instance ids of
every frame (to know which things were ever in view). It does not read the fusion's names or its
hints: each fused object is matched to the true thing whose box holds most of its points.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from conceptagent_ros.bodies.embedded.perceiving_robot import PerceivingRobot
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.fusion import ObjectMap
from conceptagent_ros.scene.house_geometry import Box, layout
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.rgbd_camera import DEFAULT_CAMERA, CameraConfig
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall

MIN_PIXELS_SEEN = 30  # a thing covering fewer pixels than this in every frame was never really in view


@dataclass
class MapScore:
    scene: str
    frames: int
    seen: int  # true things in view in some frame
    found: int  # of those, found with the right label
    fused: int  # objects in the map
    correct: int  # fused objects on a true thing with its label
    duplicates: int  # fused objects beyond the first on the same true thing
    centroid_error_m: float  # mean, over found things, of the best match's centroid distance
    missed: list[str] = field(default_factory=list)
    spurious: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    seen_ids: list[str] = field(default_factory=list)
    seconds_per_frame: float = 0.0

    @property
    def recall(self) -> float:
        return self.found / self.seen if self.seen else 1.0

    @property
    def precision(self) -> float:
        return self.correct / self.fused if self.fused else 1.0

    @property
    def duplicate_rate(self) -> float:
        return self.duplicates / self.seen if self.seen else 0.0


def _inside(points: np.ndarray, box: Box, margin: float = 0.03) -> int:
    lo = np.asarray(box.center) - np.asarray(box.size) / 2 - margin
    hi = np.asarray(box.center) + np.asarray(box.size) / 2 + margin
    return int(np.all((points >= lo) & (points <= hi), axis=1).sum())


def score_map(object_map: ObjectMap, truth: dict[str, Box], seen: set[str], scene: str, frames: int) -> MapScore:
    by_truth: dict[str, list[tuple[str, float]]] = {}
    spurious, correct = [], 0
    for obj in object_map.objects.values():
        # The smallest true box holding (nearly) as many of its points as any: a knife's points are
        # also within a few centimetres of the counter it lies on
        counts = {tid: _inside(obj.points, box) for tid, box in truth.items()}
        most = max(counts.values(), default=0)
        holders = [tid for tid, n in counts.items() if n >= max(0.5 * obj.points.shape[0], 0.9 * most)]
        best = min(holders, key=lambda t: float(np.prod(truth[t].size)), default=None)
        if best is None or truth[best].category != obj.label:
            spurious.append(f"{obj.id} ({obj.label})")
            continue
        correct += 1
        by_truth.setdefault(best, []).append((obj.id, math.dist(obj.centroid, truth[best].center)))
    found = [t for t in seen if t in by_truth]
    duplicates = sum(len(by_truth[t]) - 1 for t in by_truth)
    errors = [min(d for _, d in by_truth[t]) for t in found]
    return MapScore(
        scene=scene, frames=frames, seen=len(seen), found=len(found), fused=len(object_map.objects), correct=correct,
        duplicates=duplicates, centroid_error_m=float(np.mean(errors)) if errors else 0.0,
        missed=sorted(seen - set(found)), spurious=sorted(spurious), seen_ids=sorted(seen),
        duplicated=sorted(f"{t}: {', '.join(i for i, _ in by_truth[t])}" for t in by_truth if len(by_truth[t]) > 1),
    )


def survey_route(world: World) -> list[SkillCall]:
    """Every room, and in it every piece of furniture; containers are opened on the way, so their
    insides are seen, and closed again."""
    calls: list[SkillCall] = []
    for rid in sorted(world.scene.rooms):
        calls.append(SkillCall("navigate_to", (rid,)))
        for obj in sorted(world.scene.objects.values(), key=lambda o: o.id):
            if obj.room == rid and obj.parent is None and not obj.has("pickupable"):
                calls.append(SkillCall("navigate_to", (obj.id,)))
                if obj.has("openable") and not obj.flag("open"):
                    # looked into from where it is opened, and shut before the robot moves on: left
                    # open, a fridge's things are seen from across the room too, at a depth noise
                    # that smears them beyond their boxes
                    calls += [SkillCall("open", (obj.id,)), SkillCall("close", (obj.id,))]
    return calls


def survey_scene(scene_name: str, camera: CameraConfig = DEFAULT_CAMERA, seed: int = 0) -> tuple[MapScore, PerceivingRobot]:
    """Drive the survey route with the camera on, then score the map against the final truth."""
    world = World(load_scene(scene_name), seed=seed)
    seen: set[str] = set()

    def note(frame: Frame) -> None:
        assert frame.instance_ids is not None
        counts = np.bincount(frame.instance_ids[frame.instance_ids >= 0].ravel(), minlength=len(frame.instance_names))
        seen.update(frame.instance_names[i] for i in np.flatnonzero(counts >= MIN_PIXELS_SEEN))

    robot = PerceivingRobot(world, camera=camera, seed=seed, frame_hook=note)
    start = time.perf_counter()
    robot.observe()
    for call in survey_route(world):
        outcome = world.execute(call)
        if outcome.success:
            robot.observe()
    elapsed = time.perf_counter() - start
    truth = layout(world.scene, previous=robot.boxes)  # where the camera saw things
    # A thing seen inside a container that was later closed is still in the map: score against all
    score = score_map(robot.map, truth, seen, scene_name, robot.log.frames)
    score.seconds_per_frame = elapsed / max(1, robot.log.frames)
    return score, robot
