"""Parallel-jaw grasps from an object's points and the points around it.

Candidates are hand orientations -- straight down with the fingers closing at several yaws, and
from the side at several headings with the fingers closing level or upright -- each slid along its
approach as deep as the hand can go: until the palm would touch the object, or a finger or the
space between the fingers would touch anything else (the support, other objects). What then lies
between the fingers is the grasp: it must be there (enough points, deep enough), the contacts at its
two extremes along the closing axis must face outward along it (antipodal, from open3d normals),
and nothing else may be in the hand's way. Survivors are scored (antipodality, contact depth,
approach, centring), checked for reach through the arm's own callback, and returned best first.

Frames: world frame, metres. A grasp's rotation has columns x (closing), y (along a finger's
width), z (approach); its position is the middle between the fingers, half a finger deep.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.manipulation.clouds import clean, near, outward_normals, robust_sigma, voxel_thin
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.hand_frame import hand_frame
from conceptagent_ros.manipulation.robot_spec import ArmSpec, GripperSpec

# (position, quaternion x y z w) -> can the arm put its grasp frame there?
Reachability = Callable[[np.ndarray, np.ndarray], bool]

DOWN = np.array([0.0, 0.0, -1.0])


@dataclass(frozen=True)
class GraspConfig:
    top_yaws: int = 6  # closing-axis yaws for top-down grasps, over 180 degrees
    side_headings: int = 8  # approach headings for side grasps, over 360 degrees
    side_grasps: bool = True
    min_region_points: int = 6  # object points between the fingers
    # metres of the object between the fingers, along the approach: a fingertip grasp of a plate 8 mm
    # thick, the fingertips support_clearance over the table, has 6 mm
    min_contact_depth: float = 0.005
    # metres between the two contacts at least: less is one face's points seen edge-on (a phone's top
    # taken from the side), nothing to squeeze
    min_width: float = 0.004
    # metres the hand may reach below the support's top (plan's support_z): the fingertips resting on it
    support_tolerance: float = 0.005
    # metres the fingertips stay above the support's top (the object's other surroundings keep the
    # gripper's clearance): low over the surface, as a person takes a phone off a table
    support_clearance: float = 0.0015
    # surroundings' points this close above support_z are the support's top; where the support's own
    # points scatter more (noisy depth), SUPPORT_SPREAD_SIGMAS times their spread (support_band_above)
    support_band: float = 0.003
    # how squarely each contact faces the closing axis (_contact_alignment, 1 = square). 0.4 was chosen
    # on the development objects (random_urdfs 000-059 and the named ones): 0.8 and 0.7 refused grasps
    # that held with rubber-like fingertips (friction 1.2), 0.25 gained nothing more
    min_antipodal: float = 0.4
    contact_band: float = 0.004  # points this close to an extreme along x are its contacts
    scene_voxel: float = 0.004  # the surroundings are thinned to one point per voxel
    pre_grasp_distance: float = 0.10  # the pre-grasp stands this far back along the approach
    max_candidates: int = 8  # reachable candidates returned


@dataclass(frozen=True)
class GraspCandidate:
    position: np.ndarray  # the grasp centre, world
    rotation: np.ndarray  # 3 x 3, columns x (closing), y (finger width), z (approach)
    width: float  # the object's extent between the fingers: how far they close
    score: float
    approach: str  # "top" | "side"
    antipodal: float
    contact_depth: float

    @property
    def quaternion(self) -> np.ndarray:
        """x, y, z, w."""
        return Rotation.from_matrix(self.rotation).as_quat()

    @property
    def approach_axis(self) -> np.ndarray:
        return self.rotation[:, 2]

    def pre_grasp(self, distance: float) -> np.ndarray:
        return self.position - self.approach_axis * distance


@dataclass(frozen=True)
class GraspPlan:
    candidates: tuple[GraspCandidate, ...]  # best first, all reachable
    considered: int
    rejected: dict[str, int] = field(default_factory=dict)  # why candidates fell, by reason
    seconds: float = 0.0

    @property
    def best(self) -> GraspCandidate:
        return self.candidates[0]


def _orientations(config: GraspConfig) -> Iterator[tuple[str, np.ndarray]]:
    for k in range(config.top_yaws):
        yaw = np.pi * k / config.top_yaws
        yield "top", hand_frame(DOWN, np.array([np.cos(yaw), np.sin(yaw), 0.0]))
    if not config.side_grasps:
        return
    for k in range(config.side_headings):
        heading = 2 * np.pi * k / config.side_headings
        approach = np.array([np.cos(heading), np.sin(heading), 0.0])
        yield "side", hand_frame(approach, np.array([-np.sin(heading), np.cos(heading), 0.0]))  # fingers level
        yield "side", hand_frame(approach, np.array([0.0, 0.0, 1.0]))  # fingers one above the other


def _aligned_orientations(obj: np.ndarray, config: GraspConfig) -> Iterator[tuple[str, np.ndarray]]:
    """Hands squared to the object's own footprint axes (its horizontal principal axes): a box
    lying at any yaw offers faces to close on, which the fixed yaws only meet by chance."""
    xy = obj[:, :2] - obj[:, :2].mean(axis=0)
    _, vectors = np.linalg.eigh(xy.T @ xy)
    major = float(np.arctan2(vectors[1, 1], vectors[0, 1]))
    for yaw in (major, major + np.pi / 2):
        yield "top", hand_frame(DOWN, np.array([np.cos(yaw), np.sin(yaw), 0.0]))
    if not config.side_grasps:
        return
    for k in range(4):
        heading = major + k * np.pi / 2
        approach = np.array([np.cos(heading), np.sin(heading), 0.0])
        yield "side", hand_frame(approach, np.array([-np.sin(heading), np.cos(heading), 0.0]))
        yield "side", hand_frame(approach, np.array([0.0, 0.0, 1.0]))


class GraspPlanner:
    """`plan(object_points, scene_points)` -> GraspPlan, or ManipulationError with EMPTY_CLOUD,
    NO_GRASP_FOUND or UNREACHABLE."""

    def __init__(self, gripper: GripperSpec, arm: ArmSpec | None = None, reachable: Reachability | None = None,
                 config: GraspConfig | None = None):
        import open3d  # noqa: F401  (loaded here, so that no plan's time includes loading it)

        self.gripper, self.arm, self.reachable = gripper, arm, reachable
        self.config = config or GraspConfig()
        self.orientations = list(_orientations(self.config))

    def plan(self, object_points: object, scene_points: object = None, support_z: float | None = None) -> GraspPlan:
        """`support_z`: the height of what the object rests on, where known; no part of the hand
        goes below it. The support's top is often not in `scene_points` where it matters: the arm
        hides the table in front of the object from a mast camera, and a side grasp closing upright
        on a phone put its lower finger and the palm into the table."""
        started = time.perf_counter()
        obj = clean(object_points, "object")
        g, cfg = self.gripper, self.config
        centre = obj.mean(axis=0)
        radius = float(np.linalg.norm(obj - centre, axis=1).max())
        # only what the hand could touch: within the object plus the hand's size
        hand = g.max_opening + 2 * g.finger_thickness + g.palm_depth + g.finger_depth + g.palm_width
        scene = voxel_thin(near(clean(scene_points, "scene", required=False), centre, radius + hand), cfg.scene_voxel)
        if support_z is not None:  # the support as points, where the camera saw it or not: the fingers stop on it
            scene = np.concatenate([scene, _support_patch(centre, radius + hand, support_z, 2 * cfg.scene_voxel)])
        on_support = np.zeros(len(scene), bool)
        if support_z is not None:
            # measured with the patch among the points, which outnumber the table's seen ones round a
            # plate: on the tabletop the band stays at support_band (docs/manipulation.md)
            on_support = scene[:, 2] <= support_z + support_band_above(scene, support_z, cfg.support_band)
            on_support |= lone_grains(scene, on_support, support_z)
            # the support's points are the plane they scatter about: a grain of depth noise 5 mm up
            # is no obstacle under a fingertip (the patch above holds the plane itself)
            scene = scene.copy()
            scene[on_support, 2] = np.minimum(scene[on_support, 2], support_z)
        normals = outward_normals(obj)
        rejected: dict[str, int] = {}
        found: list[GraspCandidate] = []
        for approach, rotation in [*self.orientations, *_aligned_orientations(obj, cfg)]:
            q_obj, q_scene = (obj - centre) @ rotation, (scene - centre) @ rotation
            extent_y = float(np.ptp(q_obj[:, 1]))
            offsets = [0.0]
            if extent_y > 3 * g.finger_width:  # long along the fingers' width: grasp at a few places
                offsets += [-extent_y / 4, extent_y / 4]
            for oy in offsets:
                outcome = self._evaluate(q_obj, q_scene, on_support, normals @ rotation, oy)
                if isinstance(outcome, str):
                    rejected[outcome] = rejected.get(outcome, 0) + 1
                    continue
                offset, width, antipodal, depth = outcome
                position = centre + rotation @ offset
                if support_z is not None and self._lowest(position, rotation) < support_z - cfg.support_tolerance:
                    rejected["below_support"] = rejected.get("below_support", 0) + 1
                    continue
                score = (2.0 * antipodal + min(depth / g.finger_depth, 1.0) + (0.4 if approach == "top" else 0.0)
                         - 0.3 * abs(oy) / max(extent_y / 2, 1e-6) - 0.5 * (width / g.max_opening) ** 4)
                found.append(GraspCandidate(position, rotation, width, score, approach, antipodal,
                                            depth))
        considered = sum(rejected.values()) + len(found)
        if not found:
            reasons = ", ".join(f"{n} {why}" for why, n in sorted(rejected.items())) or "none considered"
            raise ManipulationError("NO_GRASP_FOUND", f"none of {considered} grasps fits ({reasons}); the object is "
                                                      f"{2 * radius:.3f} m across, the hand opens {g.max_opening:.3f} m")
        found.sort(key=lambda c: -c.score)
        reachable = [c for c in self._reachable(found)]
        if not reachable:
            raise ManipulationError("UNREACHABLE", f"{len(found)} grasps fit the object at "
                                                   f"({centre[0]:.2f}, {centre[1]:.2f}, {centre[2]:.2f}) but the arm "
                                                   "reaches none of them")
        return GraspPlan(tuple(reachable), considered, rejected, time.perf_counter() - started)

    def _lowest(self, position: np.ndarray, rotation: np.ndarray) -> float:
        """The lowest point of the open hand (its fingers and palm as one box) at a grasp pose."""
        g = self.gripper
        half_x = max(g.max_opening / 2 + g.finger_thickness, g.palm_length / 2)
        half_y = max(g.finger_width, g.palm_width) / 2
        corners = np.array([[sx * half_x, sy * half_y, z] for sx in (-1, 1) for sy in (-1, 1)
                            for z in (g.finger_depth / 2, -(g.finger_depth / 2 + g.palm_depth))])
        return float((position + corners @ rotation.T)[:, 2].min())

    def _reachable(self, ranked: list[GraspCandidate]) -> Iterator[GraspCandidate]:
        kept = 0
        for candidate in ranked:
            if kept >= self.config.max_candidates:
                return
            pre = candidate.pre_grasp(self.config.pre_grasp_distance)
            if self.arm is not None and not (self.arm.within_reach(candidate.position) and self.arm.within_reach(pre)):
                continue
            if self.reachable is not None and not (self.reachable(candidate.position, candidate.quaternion)
                                                   and self.reachable(pre, candidate.quaternion)):
                continue
            kept += 1
            yield candidate

    def _evaluate(self, q_obj: np.ndarray, q_scene: np.ndarray, on_support: np.ndarray, n_obj: np.ndarray,
                  oy: float) -> str | tuple[np.ndarray, float, float, float]:
        """One hand orientation at offset `oy` along the fingers' width, in the hand's axes around
        the object's centre (`on_support`: which of the surroundings are the support's top):
        (grasp offset, width, antipodality, contact depth) or why not."""
        g, cfg = self.gripper, self.config
        half_open, half_depth, c = g.max_opening / 2, g.finger_depth / 2, g.clearance
        slab = np.abs(q_obj[:, 1] - oy) <= g.finger_width / 2
        if slab.sum() < cfg.min_region_points:
            return "no_contact"
        ox = float((q_obj[slab, 0].max() + q_obj[slab, 0].min()) / 2)
        for _ in range(2):  # the depth depends on the centring and the centring on what the depth lets in
            s = self._deepest(q_obj, q_scene, on_support, ox, oy)
            if s is None:
                return "collision"
            u = q_obj - np.array([ox, oy, s])
            region = (np.abs(u[:, 0]) <= half_open) & (np.abs(u[:, 1]) <= g.finger_width / 2) \
                & (np.abs(u[:, 2]) <= half_depth)
            if region.sum() < cfg.min_region_points:
                in_fingers = (np.abs(u[:, 0]) > half_open) & (np.abs(u[:, 0]) <= half_open + g.finger_thickness) \
                    & (np.abs(u[:, 1]) <= g.finger_width / 2)
                return "too_wide" if in_fingers.any() else "no_contact"
            new_ox = ox + float((u[region, 0].max() + u[region, 0].min()) / 2)
            if abs(new_ox - ox) < 1e-4:
                break
            ox = new_ox
        u = q_obj - np.array([ox, oy, s])
        region = (np.abs(u[:, 0]) <= half_open) & (np.abs(u[:, 1]) <= g.finger_width / 2) \
            & (np.abs(u[:, 2]) <= half_depth)
        if region.sum() < cfg.min_region_points:
            return "no_contact"
        xs, zs = u[region, 0], u[region, 2]
        width = float(xs.max() - xs.min())
        if width > g.max_opening - 2 * c:
            return "too_wide"
        if width < cfg.min_width:
            return "one_face"
        depth = float(zs.max() - zs.min())
        if depth < cfg.min_contact_depth:
            return "shallow"
        normals = n_obj[region]
        antipodal = min(_contact_alignment(normals[xs >= xs.max() - cfg.contact_band], 1.0),
                        _contact_alignment(normals[xs <= xs.min() + cfg.contact_band], -1.0))
        if antipodal < cfg.min_antipodal:
            return "not_antipodal"
        return np.array([ox, oy, s]), width, antipodal, depth

    def _deepest(self, q_obj: np.ndarray, q_scene: np.ndarray, on_support: np.ndarray, ox: float,
                 oy: float) -> float | None:
        """How far along the approach the hand's centre can go (from the object's centre) before the
        palm meets the object or anything of the hand meets the surroundings (the support's top:
        the fingertips stop support_clearance short of it); None if not even the shallowest
        useful depth is free."""
        g = self.gripper
        half_open, half_depth = g.max_opening / 2, g.finger_depth / 2
        outer = half_open + g.finger_thickness
        # what lies behind where the hand starts its approach (the pre-grasp) is not in its way
        behind = float(q_obj[:, 2].min()) - self.config.pre_grasp_distance - g.palm_depth
        bounds = [np.inf]
        for points, is_object, c in ((q_obj, True, g.clearance), (q_scene[~on_support], False, g.clearance),
                                     (q_scene[on_support], False, self.config.support_clearance)):
            points = points[points[:, 2] >= behind]
            if len(points) == 0:
                continue
            x, y, z = points[:, 0] - ox, points[:, 1] - oy, points[:, 2]
            palm = (np.abs(x) <= outer) & (np.abs(y) <= g.palm_width / 2)
            if palm.any():  # the palm face stays short of every point in front of it
                bounds.append(float((z[palm] + half_depth - c).min()))
            fingers = (np.abs(x) > half_open - (0 if is_object else c)) & (np.abs(x) <= outer + c) \
                & (np.abs(y) <= g.finger_width / 2 + c)
            if not is_object:  # nothing but the object between the fingers either
                fingers |= (np.abs(x) <= half_open) & (np.abs(y) <= g.finger_width / 2 + c)
            if fingers.any():  # the fingertips stop short of it
                bounds.append(float((z[fingers] - half_depth - c).min()))
        deepest = min(bounds)
        # the shallowest useful depth: the fingertips reach the object's near side at least
        nearest = float(q_obj[(np.abs(q_obj[:, 0] - ox) <= half_open) & (np.abs(q_obj[:, 1] - oy) <= g.finger_width / 2), 2]
                        .min(initial=np.inf))
        if not np.isfinite(deepest):
            deepest = nearest + half_depth  # nothing limits it: half a finger into the object
        if not np.isfinite(nearest) or deepest < nearest - half_depth + self.config.min_contact_depth:
            return None
        return deepest


SUPPORT_SPREAD_SIGMAS = 3.0  # a support's points this many robust deviations above its median are still it
SUPPORT_WINDOW = 0.01  # metres about support_z where the support's points are looked for


def support_band_above(scene: np.ndarray, support_z: float, least: float) -> float:
    """How far above `support_z` the support's own points reach: at least `least`, and up to
    SUPPORT_SPREAD_SIGMAS robust standard deviations (clouds.robust_sigma) above
    the median of the points within SUPPORT_WINDOW of it. Depth noise scatters a table's top over
    millimetres (about 3 mm sigma from the tabletop's cameras a metre away), as many as a thin
    plate's thickness; a fixed band took the scattered grains for obstacles and every fingertip
    grasp of a plate for a collision."""
    z = scene[np.abs(scene[:, 2] - support_z) <= SUPPORT_WINDOW, 2] if len(scene) else np.zeros(0)
    if len(z) < 10:
        return least
    return max(least, float(np.median(z)) - support_z + SUPPORT_SPREAD_SIGMAS * robust_sigma(z))


GRAIN_HEIGHT = 0.03  # metres above support_z within which a lone point may be a grain of noise
GRAIN_RADIUS = 0.015  # metres: a point with fewer than GRAIN_NEIGHBOURS others this close stands alone
GRAIN_NEIGHBOURS = 2


def lone_grains(scene: np.ndarray, on_support: np.ndarray, support_z: float) -> np.ndarray:
    """Which of `scene`'s points just above the support stand alone: fewer than GRAIN_NEIGHBOURS
    other points off the support within GRAIN_RADIUS. Depth noise's tail throws a few of a table's
    points 8-12 mm up (25 of 10,000 round a plate, 3-4 sigma), right where a fingertip grasp puts its
    fingers; anything really standing there is seen in many points, four millimetres apart in the
    thinned cloud, and stays an obstacle."""
    from scipy.spatial import cKDTree

    candidates = ~on_support & (scene[:, 2] <= support_z + GRAIN_HEIGHT)
    off_support = scene[~on_support]
    lone = np.zeros(len(scene), bool)
    if not candidates.any() or not len(off_support):
        return lone
    neighbours = cKDTree(off_support).query_ball_point(scene[candidates], GRAIN_RADIUS, return_length=True)
    lone[np.flatnonzero(candidates)] = np.asarray(neighbours) - 1 < GRAIN_NEIGHBOURS  # less the point itself
    return lone


def _support_patch(centre: np.ndarray, half: float, z: float, spacing: float) -> np.ndarray:
    """A square of points at height `z` around `centre`'s x, y, `half` out each way."""
    steps = np.arange(-half, half + 1e-9, spacing)
    xx, yy = np.meshgrid(centre[0] + steps, centre[1] + steps)
    return np.column_stack([xx.ravel(), yy.ravel(), np.full(xx.size, z)])


def _contact_alignment(normals: np.ndarray, side: float) -> float:
    """How squarely a contact patch faces the finger closing along x from `side` (+1 or -1): the
    smaller of (a) the mean |cos| between its normals and the axis (an edge or a corner, whose
    faces slant, scores low) and (b) the cos between the axis and the patch's mean normal (a
    curved patch must be centred on the axis). Normals are turned toward the finger first: the
    orientation of a thin object's normals is not reliable, their direction is."""
    if len(normals) == 0:
        return 0.0
    turned = normals * np.where(normals[:, 0] * side < 0, -1.0, 1.0)[:, None]
    mean_cos = float(np.abs(turned[:, 0]).mean())
    mean = turned.mean(axis=0)
    centred = abs(float(mean[0])) / max(float(np.linalg.norm(mean)), 1e-9)
    return min(mean_cos, centred)
