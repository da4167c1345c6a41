"""What the household body sees and remembers: per thing, the depth pixels its mast camera's
segmentation gives it (the oracle detector's masks, the geometry from depth), a half-hidden thing
filled in by symmetry, remembered where last seen (a fixed thing's box grows over views); each image
also goes, where a sink is set, to a perception node as the RGB-D frame a camera driver publishes."""
from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import numpy as np

from conceptagent_ros.bodies.household.grip import Grip
from conceptagent_ros.bodies.household.item_clouds import mirror_completed
from conceptagent_ros.bodies.household.robot_camera import CameraImage, RobotCamera, perceived_frame
from conceptagent_ros.bodies.sensing import SENSING, Sensing
from conceptagent_ros.manipulation.arm_skills import Clouds
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.geometry import noisy_mask_points
from conceptagent_ros.perception.relations3d import smallest_holder
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.world.house import House

# the head's tilts a look takes in: down at the workspace (0), and up at what stands above the arm
# (a 1.2 m shelf's top is above the lowered view from anywhere the arm reaches it)
LOOK_TILTS = (0.0, -0.45)
# a door is also looked at with the head tilted down as far as it goes (the joint's limit is 0.5):
# from beside a base unit's door the lowered view ends 40 cm above the floor, and all it showed of
# the handle (a bar 25-55 cm up) was its top 5 cm; with noisy depth the fingers closed at the bar's
# end, or on the worktop's edge taken for it
DOOR_LOOK_TILTS = (*LOOK_TILTS, 0.45)
CONTAINED_MARGIN = 0.03  # a thing's bottom this far below a holder's top (or above it) still rests on it
DOOR_SHUT_WITHIN = 0.05  # metres out of its piece's footprint a door's points still count as the piece's
# with noisy depth, furniture's remembered box leaves out this percent of its points at each end
# (a thing's points are perception/geometry.noisy_mask_points)
NOISY_BOX_PERCENT = 1.0
# metres under a container's highest seen point that are its top panel (3 cm thick), with the depth
# noise's spread at 1.5 m: what is put in goes below it
TOP_PANEL_BAND = 0.05
MIN_INSIDE_POINTS = 30  # the place planner's least support (PlaceConfig.min_support_points)


def inside_of(points: np.ndarray, eye_height: float) -> np.ndarray:
    """A container's points that can hold what is put in it: below the eye (a fridge's top seen from
    below is level too), and below its top panel where the eye sees that from above. A microwave on
    a counter shows its top as its largest level face, and the bread was put on it, not in it
    (easy_02); a fridge's top is above the eye, and what goes in stands on its shelf either way.
    All the points below the eye where fewer than MIN_INSIDE_POINTS lie under the top panel's band."""
    below = points[points[:, 2] < eye_height]
    if not len(below):
        return below
    top = float(np.percentile(below[:, 2], 99))  # the top panel's height, a flying pixel aside
    inside = below[below[:, 2] < top - TOP_PANEL_BAND]
    return inside if len(inside) >= MIN_INSIDE_POINTS else below


@dataclass(frozen=True)
class Placed:
    center: tuple[float, float, float]


@dataclass
class Seen:
    """A thing as the camera last saw it: its points' box (a fixed thing's grows over views)."""

    lo: np.ndarray
    hi: np.ndarray
    fixed: bool  # furniture: its box is the union of every view's, as nothing moves it

    @property
    def centre(self) -> np.ndarray:
        return (self.lo + self.hi) / 2


class Sight:
    """The mast camera and the memory of what it saw. `bodies` maps scene ids to PyBullet bodies."""

    def __init__(self, p: Any, client: int, robot: int, scene: Scene, home: House, bodies: dict[str, int],
                 kinds: dict[str, str], grip: Grip, sensing: Sensing = SENSING["ideal"], seed: int = 0):
        self.p, self.client, self.robot = p, client, robot
        self.scene, self.home, self.bodies, self.kinds, self.grip = scene, home, bodies, kinds, grip
        self.camera = RobotCamera(p, client, robot, noise=sensing.depth_noise, rng=np.random.default_rng([seed, 7]))
        self.names = {body: name for name, body in bodies.items()}
        self.instance_names = tuple(sorted(scene.objects))  # what a frame's instance ids index
        # where every image the camera takes goes too, as a frame (a ROS node's camera topics); None: nowhere
        self.frame_sink: Callable[[Frame], None] | None = None
        self.memory: dict[str, Seen] = {}

    def clouds(self, tilts: Collection[float] = (0.0,)) -> Clouds:
        """Per scene id, the points the camera sees of it now, with the head at each of `tilts` in
        turn (their points together); a thing's half hidden from the camera filled in by symmetry;
        what the hand holds, where the hand holds it."""
        views: dict[str, list[np.ndarray]] = {}
        for tilt in tilts:
            self.camera.tilt(tilt)
            for name, points in self._view_now().items():
                views.setdefault(name, []).append(points)
        self.camera.tilt(0.0)
        eye = self.camera.pose()[0]  # the head tilts about a joint a few centimetres from the lens
        out: Clouds = {}
        for name, parts in views.items():
            points = np.concatenate(parts)
            out[name] = mirror_completed(points, eye) if self.kinds.get(name) == "item" else points
        held = self.grip.held_points()
        if held is not None:
            out[held[0]] = held[1]
        self._remember(out)
        return out

    def _view_now(self) -> Clouds:
        """Per scene id, the points one image shows of it (as seen: not completed); the image goes to
        `frame_sink` too, where one is set (a perception node's camera topics), what the hand holds or
        is picking up left unnamed there: the gripper says what it holds, not the camera (seen in the
        rising hand, the thing would stay in perception's map where the lift left it)."""
        image = self.camera.capture()
        owners = self._owners(image)
        if self.frame_sink is not None:
            held = self.grip.held
            in_hand = {held.object_id if held is not None else None, self.grip.picking} - {None}
            hidden = np.isin(owners, [self.instance_names.index(name) for name in in_hand])
            shown = np.where(hidden, -1, owners)
            self.frame_sink(perceived_frame(image, self.camera.intrinsics(), shown, self.instance_names))
        out: Clouds = {}
        noisy = self.camera.noise is not None
        for index in np.unique(owners[owners >= 0]):
            mask = owners == index
            name = self.instance_names[index]
            points = noisy_mask_points(image.points, mask, self.kinds.get(name) == "item") if noisy \
                else image.points[mask]
            if len(points) >= 10:
                out[name] = points
        return out

    def _owners(self, image: CameraImage) -> np.ndarray:
        """Per pixel, the index into instance_names of the scene's thing it shows (-1: none, the robot
        itself, or nothing seen). A door's pixels count as its piece's only within the map's footprint
        of the piece: a swung door is not the fridge's extent (navigate_to would stand off from a
        fridge 1.4 m deep)."""
        owners = np.full(image.bodies.shape, -1, dtype=np.int32)
        valid = np.isfinite(image.points).all(axis=-1)
        for body in np.unique(image.bodies[valid]):
            name = self.names.get(int(body))
            if name is None or int(body) == self.robot or name not in self.scene.objects:
                continue
            mask = (image.bodies == body) & valid
            if self.kinds.get(name) == "door":
                shut = self.home.boxes[name].footprint_contains_all(image.points[mask], DOOR_SHUT_WITHIN)
                mask[mask] = (image.links[mask] == -1) | shut
            owners[mask] = self.instance_names.index(name)
        return owners

    def _remember(self, clouds: Clouds) -> None:
        held = self.grip.held
        for sid, points in clouds.items():
            if held is not None and sid == held.object_id:
                continue
            fixed = self.kinds.get(sid) != "item"
            if fixed and self.camera.noise is not None:  # a union over views: one outlier would stay for good
                lo, hi = np.percentile(points, [NOISY_BOX_PERCENT, 100 - NOISY_BOX_PERCENT], axis=0)
            else:
                lo, hi = points.min(axis=0), points.max(axis=0)
            old = self.memory.get(sid)
            if fixed and old is not None:
                lo, hi = np.minimum(lo, old.lo), np.maximum(hi, old.hi)
            self.memory[sid] = Seen(lo, hi, fixed)

    def positions(self) -> dict[str, Placed]:
        """Where each of the scene's things stands now, by PyBullet (its base link's box middle): what
        a perceived id is resolved by (sim/perceived_ids.py)."""
        out: dict[str, Placed] = {}
        for name, body in self.bodies.items():
            if name not in self.scene.objects:
                continue
            lo, hi = self.p.getAABB(body, -1, physicsClientId=self.client)
            out[name] = Placed(tuple(float((a + b) / 2) for a, b in zip(lo, hi)))  # type: ignore[arg-type]
        return out

    def holder(self, sid: str) -> str | None:
        """The receptacle the thing stands in or on, of those remembered (perception/relations3d)."""
        boxes = {other: (seen.lo, seen.hi) for other, seen in self.memory.items()}
        holders = [other for other in self.memory if self.scene.objects[other].has("receptacle")]
        return smallest_holder(sid, boxes, holders, CONTAINED_MARGIN)

    def door_points(self, target: str, link: int) -> np.ndarray:
        """The points the camera sees of a container's door (its `link`), with the head at each of
        DOOR_LOOK_TILTS."""
        body = self.bodies[target]
        parts = []
        for tilt in DOOR_LOOK_TILTS:
            self.camera.tilt(tilt)
            image = self.camera.capture()
            seen = (image.bodies == body) & (image.links == link) & np.isfinite(image.points).all(axis=-1)
            parts.append(image.points[seen])
        self.camera.tilt(0.0)
        points = np.concatenate(parts)
        if len(points) < 30:
            raise ManipulationError("NOT_SEEN", f"{target}'s door is not seen from here ({len(points)} points)")
        return points

    def inside_of(self, points: np.ndarray) -> np.ndarray:
        """A container's points that can hold what is put in it, as seen from the camera (inside_of)."""
        return inside_of(points, float(self.camera.pose()[0][2]))
