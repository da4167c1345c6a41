"""Opening and closing from points: drawers pulled along their front's normal, hinged doors swung
on an arc about the hinge, and the opening measured from what the camera sees afterwards.

The front is the largest near-vertical plane of the articulated part's points (open3d RANSAC); its
normal is turned toward the robot (the side the arm stands on). A handle is what stands out of the
front toward the robot; the hand closes across it, approaching against the normal. Without a
handle a drawer is taken by its front's top edge, from above, the fingers closing across the
panel. A door's hinge is the vertical edge of the front opposite its handle (or the one given).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.manipulation.clouds import Plane, clean, fit_plane, robust_sigma
from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.hand_frame import hand_frame
from conceptagent_ros.manipulation.robot_spec import GripperSpec

Kind = Literal["drawer", "door"]


@dataclass(frozen=True)
class ArticulationConfig:
    plane_threshold: float = 0.004
    min_front_points: int = 30
    handle_min_height: float = 0.008  # points this far proud of the front are a handle
    max_vertical_tilt_deg: float = 15.0  # a front's normal is within this of horizontal
    waypoint_spacing: float = 0.02  # metres between waypoints of a pull or a swing
    # a facing plane this tall and at least half as wide as the largest is a front too, however few
    # its points: a chest's top drawer pulled out over its shut fronts (DRAWER_FRONTS). Off for doors:
    # it chose a strip nearer the robot than a fridge's door and stood the base on the hinge's side
    front_min_height: float | None = None


DRAWER_FRONTS = ArticulationConfig(front_min_height=0.08)  # how drawers are seen (plan_drawer's default)


@dataclass(frozen=True)
class FrontGeometry:
    plane: Plane
    normal: np.ndarray  # horizontal, unit, toward the robot
    centre: np.ndarray
    width_axis: np.ndarray  # horizontal, along the front
    half_width: float
    top: float  # z of the front's top edge
    handle: np.ndarray | None  # the handle's centre, if one stands out
    proud: float = 0.0  # how far the handle's face stands out of the front (m)
    handle_top: float = 0.0  # z of the handle's top
    proud_above: float = 0.0  # metres out of the front a point stood to count as the handle's
    # the points standing proud of the front, and the handle's group among them (_handle_points)
    proud_points: np.ndarray | None = None
    handle_points: np.ndarray | None = None


@dataclass(frozen=True)
class ArticulationPlan:
    kind: Kind
    action: Literal["open", "close"]
    grasp_position: np.ndarray
    grasp_rotation: np.ndarray  # columns x (closing), y, z (approach), as for grasps
    waypoints: tuple[np.ndarray, ...]  # hand positions after the grasp, in order
    rotations: tuple[np.ndarray, ...]  # hand rotation at each waypoint (a door's turns with it)
    # push: the closed fingers' sides against the handle; press: the closed fingertips pressed on the
    # handle's top and dragged (friction, nothing held)
    grip: Literal["handle", "edge", "push", "press"]
    hinge: np.ndarray | None = None  # a door's hinge axis point (the axis is vertical)
    angle: float = 0.0  # a door's swing, radians
    distance: float = 0.0  # a drawer's pull or push, metres

    @property
    def grasp_quaternion(self) -> np.ndarray:
        return Rotation.from_matrix(self.grasp_rotation).as_quat()


FACING_COS = float(np.cos(np.radians(35.0)))  # a plane whose normal is this near the robot's direction faces it
SIZEABLE_SHARE = 0.5  # of the largest facing plane's points: smaller facing planes are handles and edges


def front_geometry(points: object, robot_base: object, config: ArticulationConfig | None = None) -> FrontGeometry:
    cfg = config or ArticulationConfig()
    cloud = clean(points, "front")
    towards = np.asarray(robot_base, dtype=float)[:2] - cloud[:, :2].mean(axis=0)
    plane, proud_above = _settled_plane(cloud, _vertical_plane(cloud, cfg, towards / max(float(np.linalg.norm(towards)), 1e-9)),
                                        cfg)
    normal = plane.normal.copy()
    normal[2] = 0.0
    normal /= np.linalg.norm(normal)
    inliers = plane.inliers
    centre = inliers.mean(axis=0)
    towards_robot = np.asarray(robot_base, dtype=float)[:2] - centre[:2]
    if float(normal[:2] @ towards_robot) < 0:
        normal = -normal
    offset = -float(normal @ centre)
    width_axis = np.array([-normal[1], normal[0], 0.0])
    along = (inliers - centre) @ width_axis
    height = cloud @ normal + offset
    standing_out = cloud[height > proud_above]
    proud = _handle_points(standing_out, width_axis)
    handle = _middle(proud, width_axis, normal) if len(proud) >= 3 else None
    return FrontGeometry(plane, normal, centre, width_axis, float(np.abs(along).max()), float(inliers[:, 2].max()),
                         handle, float(height.max()) if handle is not None else 0.0,
                         _top(proud) if handle is not None else 0.0, proud_above, standing_out, proud)


TOP_PERCENTILE = 90.0  # of a handle's points' heights: its top face, not a noisy point above it


def _top(points: np.ndarray) -> float:
    """The height of a handle's top: the cameras above see its top face in many points, so a high
    percentile of their heights is that face's, where the highest point alone is as high as the
    depth's noise threw one."""
    return float(np.percentile(points[:, 2], TOP_PERCENTILE))


# Depth noise (a real camera's, or bodies/sensing's realistic one) spreads a flat front over
# +-1 cm seen from a stoop, wider than plane_threshold: RANSAC's plane then held a strip of a
# base unit's door (562 of 33779 points), turned 2 degrees off it, and a third of the door stood
# "proud" of it, the handle's group with it (the fingers closed 5 cm beside the bar)
NOISE_BAND = 3.0  # robust standard deviations of the front's points about its plane: still on it
SPREAD_WINDOW = 0.02  # metres either side of the plane the spread is measured in (a handle stands further out)


def _settled_plane(cloud: np.ndarray, plane: Plane, cfg: ArticulationConfig) -> tuple[Plane, float]:
    """The front's plane, refit by least squares to every point within NOISE_BAND of the points'
    own spread about it where that spread is wider than RANSAC's threshold; and how far out of it a
    point stands proud (a handle's): handle_min_height, or the noise band where that is wider. With
    noiseless depth the plane and the threshold are RANSAC's and the config's, unchanged."""
    spread = _spread(plane.height(cloud))
    if NOISE_BAND * spread <= cfg.plane_threshold:
        return plane, cfg.handle_min_height
    for _ in range(2):  # the second fit from the first's band: the first plane was turned
        near = cloud[np.abs(plane.height(cloud)) <= max(cfg.plane_threshold, NOISE_BAND * spread)]
        if len(near) < cfg.min_front_points:
            break
        plane = _least_squares_plane(near)
        spread = _spread(plane.height(cloud))
    return plane, max(cfg.handle_min_height, NOISE_BAND * spread)


def _spread(heights: np.ndarray) -> float:
    """A robust standard deviation (1.4826 median absolute deviations) of the heights within
    SPREAD_WINDOW of the plane."""
    near = heights[np.abs(heights) <= SPREAD_WINDOW]
    if len(near) < 3:
        return 0.0
    return robust_sigma(near)


def _least_squares_plane(points: np.ndarray) -> Plane:
    """The plane through `points`' mean whose normal is their least spread (SVD), pointing up where
    it has any z, as fit_plane's are."""
    middle = points.mean(axis=0)
    normal = np.linalg.svd(points - middle, full_matrices=False)[2][2]
    if normal[2] < 0:
        normal = -normal
    return Plane(normal, -float(normal @ middle), points)


# metres between a drawer's front and the fingertips holding its handle: 8 mm and a fingertip rubbed
# the studio's chest below its top drawer as the fingers closed; 15 mm and, from a stance beside the
# chest, a handle 3.5 cm proud seen through depth noise was held by too little to pull (both 2026-12-07)
TIPS_OFF_FRONT = 0.011


def plan_drawer(points: object, robot_base: object, gripper: GripperSpec, action: Literal["open", "close"],
                distance: float, config: ArticulationConfig | None = None,
                floor_z: float | None = None) -> ArticulationPlan:
    """Pull the drawer `distance` metres toward the robot (open) or push it that far back (close).
    With `floor_z` (the surface the cabinet stands on), a handle too low for the open hand held
    level is approached pitched down, just enough for the lower finger to clear the floor."""
    cfg = config or DRAWER_FRONTS
    if not distance > 0:
        raise ManipulationError("COLLISION", f"a drawer moves a positive distance; got {distance}")
    front = front_geometry(points, robot_base, cfg)
    direction = front.normal if action == "open" else -front.normal
    grip: Literal["handle", "edge", "push", "press"]
    if front.handle is not None and _pitch_to_clear(front.handle[2], floor_z, gripper) > 0:
        # A handle too low to hold level is not held: the closed fingers push its face to close,
        # and press on its top and drag to open. Only a handle too thin to press on beside the
        # housing is still held, pitched down (the arm may not get there: UNREACHABLE)
        if action == "close":
            return _push_plan(front, gripper, distance, cfg, floor_z)
        if _press_overlap(front, gripper) >= MIN_PRESS_OVERLAP:
            return _press_plan(front, gripper, distance, cfg)
    if front.handle is not None:
        # approach against the normal, fingers closing up and down across a horizontal bar
        pitch = _pitch_to_clear(front.handle[2], floor_z, gripper)
        down = np.array([0.0, 0.0, -1.0])
        approach = -front.normal * np.cos(pitch) + down * np.sin(pitch)
        rotation = hand_frame(approach, np.array([0.0, 0.0, 1.0]))
        # the fingers reach finger_depth / 2 past the grasp point (the handle as seen: its outer
        # face): a fingertip 1 cm off the front slid into the gap below the drawer's front and rubbed
        # the chest as the fingers closed; held by as much of the handle as leaves them TIPS_OFF_FRONT
        out_of_front = float((front.handle - front.centre) @ front.normal)
        grasp = front.handle + front.normal * max(0.0, gripper.finger_depth / 2 + TIPS_OFF_FRONT - out_of_front)
        grip = "handle"
    else:
        # from above, fingers closing across the panel at its top edge's middle
        rotation = hand_frame(np.array([0.0, 0.0, -1.0]), front.normal)
        grasp = front.centre.copy()
        grasp[2] = front.top - gripper.finger_depth / 2 + gripper.clearance
        grip = "edge"
    waypoints = _straight(grasp, direction, distance, cfg)
    return ArticulationPlan("drawer", action, grasp, rotation, waypoints, tuple(rotation for _ in waypoints), grip,
                            distance=distance)


def _push_plan(front: FrontGeometry, gripper: GripperSpec, distance: float, cfg: ArticulationConfig,
               floor_z: float | None) -> ArticulationPlan:
    """Close a drawer by pushing its handle: the hand pointing down in front of the handle, fingers
    closed and side by side along the front (so the housing lies along the front and only half a
    palm reaches toward it), the fingers' sides against the handle's face, driven in by `distance`.
    Pointing down is the arm's natural pose at table height; a level hand there puts the elbow on
    the table."""
    assert front.handle is not None
    rotation = hand_frame(np.array([0.0, 0.0, -1.0]), front.width_axis)
    tip_z = front.handle[2] - 0.01  # the fingers' sides cover the handle's face from just below its middle
    if floor_z is not None:
        tip_z = max(tip_z, floor_z + gripper.clearance)
    start = _handle_face(front) + front.normal * (gripper.finger_width / 2 + gripper.clearance)
    start[2] = tip_z + gripper.finger_depth / 2  # the hand frame's origin is half a finger above the tips
    waypoints = _straight(start, -front.normal, distance, cfg)
    return ArticulationPlan("drawer", "close", start, rotation, waypoints, tuple(rotation for _ in waypoints), "push",
                            distance=distance)


PRESS_DEPTH = 0.004  # how far below the handle's top the fingertips are driven: the arm's stiffness makes the force
MIN_PRESS_OVERLAP = 0.005  # of the fingertips over the handle's top, along the normal


def _press_plan(front: FrontGeometry, gripper: GripperSpec, distance: float, cfg: ArticulationConfig) -> ArticulationPlan:
    """Open a drawer whose handle is too low to hold: the hand pointing down, fingers closed side by
    side along the front, the fingertips pressed onto the handle's top and dragged toward the robot
    by friction. The fingers stand as close to the front as the housing (half a palm toward it)
    allows without meeting the front above the handle."""
    assert front.handle is not None
    rotation = hand_frame(np.array([0.0, 0.0, -1.0]), front.width_axis)
    start = _handle_face(front) - front.normal * (front.proud - _press_finger_out(front, gripper))
    start[2] = front.handle_top - PRESS_DEPTH + gripper.finger_depth / 2  # the frame's origin is half a finger up
    waypoints = _straight(start, front.normal, distance, cfg)
    return ArticulationPlan("drawer", "open", start, rotation, waypoints, tuple(rotation for _ in waypoints), "press",
                            distance=distance)


def _handle_face(front: FrontGeometry) -> np.ndarray:
    """The middle of the handle's outer face: its centre moved out to where it stands proudest."""
    assert front.handle is not None
    return front.handle + front.normal * (front.proud - float((front.handle - front.centre) @ front.normal))


def _straight(start: np.ndarray, direction: np.ndarray, distance: float, cfg: ArticulationConfig) -> tuple[np.ndarray, ...]:
    """Waypoints from `start` along `direction` for `distance`, at most waypoint_spacing apart (start excluded)."""
    steps = max(1, int(np.ceil(distance / cfg.waypoint_spacing)))
    return tuple(start + direction * distance * (k / steps) for k in range(1, steps + 1))


def _press_finger_out(front: FrontGeometry, gripper: GripperSpec) -> float:
    """How far out of the front's plane the pressing fingers' middle stands: over the handle's top,
    but no nearer the front than the housing (half a palm toward it) allows."""
    return max(front.proud - gripper.finger_width / 2, gripper.palm_width / 2 + gripper.clearance)


def _press_overlap(front: FrontGeometry, gripper: GripperSpec) -> float:
    """How much of the fingertips (m, along the normal) lies over the handle when pressing."""
    return front.proud - (_press_finger_out(front, gripper) - gripper.finger_width / 2)


def _pitch_to_clear(handle_z: float, floor_z: float | None, gripper: GripperSpec, most_deg: float = 60.0) -> float:
    """How far (radians) to pitch a level approach down so the open hand (its lower finger, or its
    housing where that is wider) stays `clearance` above the floor: 0 when level already clears it."""
    if floor_z is None:
        return 0.0
    # how far below the handle the hand reaches when level: its lower finger, or its housing if wider
    reach_down = max(gripper.max_opening / 2 + gripper.finger_thickness, gripper.palm_length / 2)
    room = handle_z - floor_z - gripper.clearance
    if room >= reach_down:
        return 0.0
    if room <= 0:
        raise ManipulationError("COLLISION", f"the handle is {100 * (handle_z - floor_z):.1f} cm above the floor: "
                                             "no room for a finger under it")
    return float(min(np.arccos(room / reach_down), np.radians(most_deg)))


@dataclass(frozen=True)
class DoorFrame:
    """A hinged door as seen closed: `hinge` on its vertical axis (in the front's plane, at the
    handle's height), `along` from the hinge toward the handle, `out` out of the front (toward the
    robot), both horizontal and unit; `width` from the hinge to the free edge."""
    hinge: np.ndarray
    along: np.ndarray
    out: np.ndarray
    width: float
    turn: float  # +1 or -1: the sense about +z in which the door opens

    def at(self, angle: float, radius: float, off: float = 0.0) -> np.ndarray:
        """The point `radius` from the hinge on the door opened by `angle`, `off` out of its outer face."""
        return self.hinge + radius * self.radial(angle) + off * self.outer(angle)

    def radial(self, angle: float) -> np.ndarray:
        return np.cos(angle) * self.along + np.sin(angle) * self.out

    def outer(self, angle: float) -> np.ndarray:
        """The outer face's normal with the door opened by `angle` (its inner face's is the opposite)."""
        return -np.sin(angle) * self.along + np.cos(angle) * self.out


def door_frame(front: FrontGeometry, hinge_side: Literal["left", "right"] | None = None,
               gripper: GripperSpec | None = None) -> DoorFrame:
    """The hinge is the front's vertical edge opposite the handle, or `hinge_side` (as seen from the robot)."""
    if front.handle is None:
        raise ManipulationError("NO_GRASP_FOUND", "the door shows no handle to hold")
    # seen from the robot (looking along -normal), "left" is +width_axis
    handle_along = float((front.handle - front.centre) @ front.width_axis)
    if hinge_side is None:
        side = -np.sign(handle_along) or 1.0
    else:
        side = 1.0 if hinge_side == "left" else -1.0
    hinge = front.centre + front.width_axis * side * front.half_width
    hinge[2] = front.handle[2]
    along = -side * front.width_axis
    if float((front.handle - hinge) @ along) < (gripper.finger_width if gripper is not None else 0.02):
        raise ManipulationError("NO_GRASP_FOUND", "the handle is at the hinge: no lever to swing the door by")
    turn = float(np.sign(np.cross(along, front.normal)[2]))
    return DoorFrame(hinge, along, front.normal.copy(), 2 * front.half_width, turn)


def plan_door(points: object, robot_base: object, gripper: GripperSpec, action: Literal["open", "close"],
              angle: float, hinge_side: Literal["left", "right"] | None = None,
              config: ArticulationConfig | None = None, upright: bool | None = None) -> ArticulationPlan:
    """Swing a hinged door `angle` radians toward the robot (open) or back (close), holding its
    handle; the hinge is the front's vertical edge opposite the handle, or `hinge_side` (as seen
    from the robot). The fingers close across the bar (along the front for an upright bar, up and
    down for a level one; `upright` says which where the points' spread should not), their tips
    short of the door's face, and the hand turns with the door."""
    cfg = config or ArticulationConfig()
    if not 0 < angle <= np.pi * 0.75:
        raise ManipulationError("COLLISION", f"a door swings between 0 and 135 degrees; got {np.degrees(angle):.0f}")
    front = front_geometry(points, robot_base, cfg)
    door = door_frame(front, hinge_side, gripper)
    assert front.handle is not None
    # the hand's origin is half a finger back from the tips: the tips stop `clearance` short of the face
    face = float(front.centre @ front.normal)
    out = max(float(front.handle @ front.normal) - face, gripper.finger_depth / 2 + gripper.clearance)
    grasp = front.handle + front.normal * (face + out - float(front.handle @ front.normal))
    radius = float((grasp - door.hinge) @ door.along)
    upright = _upright_bar(front) if upright is None else upright
    closing = front.width_axis if upright else np.array([0.0, 0.0, 1.0])
    rotation = hand_frame(-front.normal, closing)
    sense = door.turn if action == "open" else -door.turn
    steps = max(2, int(np.ceil(radius * angle / cfg.waypoint_spacing)))
    waypoints, rotations = [], []
    for k in range(1, steps + 1):
        spin = Rotation.from_rotvec([0.0, 0.0, sense * angle * k / steps])
        waypoints.append(door.hinge + spin.apply(grasp - door.hinge))
        rotations.append(spin.as_matrix() @ rotation)
    return ArticulationPlan("door", action, grasp, rotation, tuple(waypoints), tuple(rotations), "handle",
                            hinge=door.hinge, angle=angle)


HANDLE_CELL = 0.015  # metres: proud points within three of these of each other are one part of the front
MIN_BAR_POINTS = 10  # a handle's group of fewer points does not say which way its bar runs


def rolled_over(plan: ArticulationPlan) -> ArticulationPlan:
    """The same plan with the hand rolled half a turn about its approach at every step: a parallel
    gripper's fingers are alike, so it closes across the same bar, and the arm's wrist comes at it
    the other way round (from a base unit's second stance, IK found no way to one and did to the other)."""
    flip = np.diag([-1.0, -1.0, 1.0])
    return replace(plan, grasp_rotation=plan.grasp_rotation @ flip, rotations=tuple(r @ flip for r in plan.rotations))


def closes_up_and_down(rotation: np.ndarray) -> bool:
    """Whether a hand turned as `rotation` closes its fingers up and down (on a level bar)."""
    return abs(float(np.asarray(rotation)[2, 0])) > 0.5


def _handle_points(proud: np.ndarray, width_axis: np.ndarray) -> np.ndarray:
    """The largest group of the points proud of a front, as it is seen face on (along it and up):
    the handle. Stray points stand proud too (a carcass's top edge, depth noise at the front's
    rim), and a few of them drew the mean of all 2 cm off a door's handle, the fingers closing beside it."""
    if len(proud) < 3:
        return proud
    from scipy.ndimage import binary_dilation, label
    face_on = np.column_stack([proud @ width_axis, proud[:, 2]])
    cells = np.floor((face_on - face_on.min(axis=0)) / HANDLE_CELL).astype(int)
    grid = np.zeros(cells.max(axis=0) + 1, dtype=bool)
    grid[cells[:, 0], cells[:, 1]] = True
    # grown by a cell, so that a bar seen from afar in rows 3-4 cm apart stays one group
    groups, count = label(binary_dilation(grid, np.ones((3, 3), dtype=bool)), structure=np.ones((3, 3), dtype=bool))
    of_point = groups[cells[:, 0], cells[:, 1]]
    largest = int(np.argmax(np.bincount(of_point, minlength=count + 1)[1:])) + 1
    return proud[of_point == largest]


def _middle(points: np.ndarray, width_axis: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """The middle of a handle's seen extent along the front and up (its mean sits at the densely
    seen end where the arm hides part of a bar: 0.5 cm below an upright bar's top), at its median
    depth out of the front."""
    along, up, out = points @ width_axis, points[:, 2], points @ normal
    a = float(np.mean(np.percentile(along, [5, 95])))
    z = float(np.mean(np.percentile(up, [5, 95])))
    o = float(np.median(out))
    horizontal = a * width_axis + o * normal
    return np.array([horizontal[0], horizontal[1], z])


def _upright_bar(front: FrontGeometry) -> bool:
    """Whether the handle's points spread more up and down than along the front."""
    proud = front.proud_points
    if proud is None or len(proud) < 3:
        return False
    # judged on the handle's group: with noisy depth, stray proud points along a base unit's whole
    # door (its rim, the worktop's edge over it) spread wider than its upright bar is tall, and the
    # fingers closed up and down beside the bar. A hand turned so that it is out of reach is turned
    # the other way by the caller (the family house's fridge is held so)
    group = front.handle_points
    if group is not None and len(group) >= MIN_BAR_POINTS:
        proud = group
    return float(np.ptp(proud[:, 2])) > float(np.ptp(proud @ front.width_axis))


PUSH_CLEARANCE = 0.01  # metres between the hand and the door's face where the push starts


def _swing_range(start: float, end: float, face: Literal["inner", "outer"]) -> None:
    """A push on the inner face opens the door on (start < end); one on the outer face shuts it (end < start)."""
    ok = 0 <= start < end <= np.pi * 0.75 if face == "inner" else 0 <= end < start <= np.pi * 0.75
    if not ok:
        verb = "swings a door on" if face == "inner" else "swings a door back"
        raise ManipulationError("COLLISION", f"a push on its {face} face {verb}, within 0 to 135 degrees; got "
                                             f"{np.degrees(start):.0f} to {np.degrees(end):.0f}")


def plan_door_push(door: DoorFrame, shoulder: object, gripper: GripperSpec, start: float, end: float,
                   radius: float, config: ArticulationConfig | None = None) -> ArticulationPlan:
    """Swing an opened door on from `start` to `end` radians by pushing its inner face `radius` from
    the hinge with the closed hand, held level and pointing from the shoulder at the push: its
    side against the face where the door still faces away from the robot, its fingertips where it
    has turned toward it. A robot that pulled the door by its handle from the handle's side cannot
    hold on past about 40 degrees (the handle's face turns away from it): people let go there and
    push the door on from inside as well."""
    cfg = config or ArticulationConfig()
    _swing_range(start, end, "inner")
    reference = np.asarray(shoulder, dtype=float)
    steps = max(2, int(np.ceil(radius * (end - start) / cfg.waypoint_spacing)))
    poses = [_push_pose(door, reference, gripper, start + (end - start) * k / steps, radius) for k in range(steps + 1)]
    return _sweep(poses, door, "inner", end - start)


OVER_THE_TOP = 0.08  # metres below a low door's top edge the fingertips push it from above


def plan_door_push_over(door: DoorFrame, top: float, gripper: GripperSpec, start: float, end: float, radius: float,
                        config: ArticulationConfig | None = None,
                        face: Literal["inner", "outer"] = "inner") -> ArticulationPlan:
    """Swing a low door (a base cabinet's, its top edge below the shoulder) from `start` to `end`
    radians with the closed hand come in over its top edge: pointing down beside the door's `face`
    (the inner one opens it on, the hand in the gap between the door and the front; the outer one
    shuts it), its side against the face `radius` from the hinge, its fingertips OVER_THE_TOP below
    the edge. An arm reaching round the free edge of a door this low swept its forearm through the
    door's outer face and shut it again."""
    cfg = config or ArticulationConfig()
    _swing_range(start, end, face)
    height = top - OVER_THE_TOP + gripper.finger_depth / 2  # the hand's origin is half a finger above the tips
    steps = max(2, int(np.ceil(radius * abs(end - start) / cfg.waypoint_spacing)))
    poses = []
    for k in range(steps + 1):
        angle = start + (end - start) * k / steps
        beside = _face_normal(door, angle, face)
        # the fingers close along the door, so the hand's narrow side (its palm's width) faces it
        point = door.at(angle, radius) + beside * (gripper.palm_width / 2 + PUSH_CLEARANCE)
        point[2] = height
        poses.append((point, hand_frame(np.array([0.0, 0.0, -1.0]), door.radial(angle))))
    return _sweep(poses, door, face, end - start)


def _face_normal(door: DoorFrame, angle: float, face: Literal["inner", "outer"]) -> np.ndarray:
    return door.outer(angle) if face == "outer" else -door.outer(angle)


def _sweep(poses: list[tuple[np.ndarray, np.ndarray]], door: DoorFrame, face: Literal["inner", "outer"],
           turn: float) -> ArticulationPlan:
    first, first_rotation = poses[0]
    return ArticulationPlan("door", "open" if face == "inner" else "close", first, first_rotation,
                            tuple(p for p, _ in poses[1:]), tuple(r for _, r in poses[1:]), "push",
                            hinge=door.hinge, angle=abs(turn))


def _push_pose(door: DoorFrame, shoulder: np.ndarray, gripper: GripperSpec, angle: float,
               radius: float) -> tuple[np.ndarray, np.ndarray]:
    contact = door.at(angle, radius)
    inner = -door.outer(angle)
    reach = contact - shoulder
    reach[2] = 0.0
    approach = reach / max(float(np.linalg.norm(reach)), 1e-9)
    side = np.array([-approach[1], approach[0], 0.0])  # the hand's width, with the fingers closing up and down
    # the hand's nearest part to the face: its fingertips as far as it points at the face, its side as far as it lies along it
    off = abs(float(approach @ inner)) * gripper.finger_depth / 2 + abs(float(side @ inner)) * gripper.palm_width / 2
    return contact + inner * (off + PUSH_CLEARANCE), hand_frame(approach, np.array([0.0, 0.0, 1.0]))


def door_opening(points: object, closed_out: object, config: ArticulationConfig | None = None) -> float:
    """How far (radians, 0 to pi/2) a door stands open, from its points as seen now: the turn of
    its largest upright plane from the closed front, whose normal is `closed_out` (a door seen from
    its edge shows its inner face or its outer one; either is the door's plane)."""
    cfg = config or ArticulationConfig()
    plane = _vertical_plane(clean(points, "door"), cfg)
    normal = plane.normal[:2] / max(float(np.linalg.norm(plane.normal[:2])), 1e-9)
    out = np.asarray(closed_out, dtype=float)[:2]
    return float(np.arccos(np.clip(abs(float(normal @ out)) / max(float(np.linalg.norm(out)), 1e-9), 0.0, 1.0)))


def drawer_opening(front_now: object, closed_front: FrontGeometry, config: ArticulationConfig | None = None) -> float:
    """How far (m) a drawer stands out from where its front was when closed, measured from the
    front's points as seen now: the plane's shift along the closed front's normal."""
    cfg = config or DRAWER_FRONTS
    plane = _vertical_plane(clean(front_now, "front"), cfg, closed_front.normal)
    return float((plane.inliers.mean(axis=0) - closed_front.centre) @ closed_front.normal)


def _vertical_plane(cloud: np.ndarray, cfg: ArticulationConfig, facing: np.ndarray | None = None) -> Plane:
    """A plane of the part whose normal is near horizontal (a front). With `facing` (a horizontal
    direction, toward the robot), the front is the nearest to the robot of the sizeable planes
    facing it: a drawer pulled out shows its sides too, and they can hold more points than its
    front; an open-topped drawer shows the inside of its back wall, which faces the robot as its
    front does, further back. Without `facing`, the largest."""
    remaining = cloud
    fronts: list[Plane] = []
    for _ in range(6):
        plane = fit_plane(remaining, cfg.plane_threshold, cfg.min_front_points)
        if plane is None:
            break
        tilt_from_horizontal = float(np.degrees(np.arcsin(np.clip(abs(plane.normal[2]), 0.0, 1.0))))
        if tilt_from_horizontal <= cfg.max_vertical_tilt_deg:
            if facing is None:
                return plane
            fronts.append(plane)
        keep = np.abs(plane.height(remaining)) > cfg.plane_threshold
        remaining = remaining[keep]
    if fronts and facing is not None:
        alignment = [abs(float(f.normal[:2] @ facing[:2])) for f in fronts]
        facing_planes = [f for f, a in zip(fronts, alignment) if a >= FACING_COS]
        if not facing_planes:
            return fronts[int(np.argmax(alignment))]
        biggest = max(facing_planes, key=lambda f: len(f.inliers))
        across = np.array([-facing[1], facing[0]])
        width = float(np.ptp(biggest.inliers[:, :2] @ across))
        # not a handle bar: as many points as the largest front's share, or as wide as it and taller
        # than a bar (a chest's top drawer pulled out, a quarter of the chest's shut fronts below it)
        sizeable = [f for f in facing_planes if len(f.inliers) >= SIZEABLE_SHARE * len(biggest.inliers)
                    or (cfg.front_min_height is not None and float(np.ptp(f.inliers[:, 2])) >= cfg.front_min_height
                        and float(np.ptp(f.inliers[:, :2] @ across)) >= SIZEABLE_SHARE * width)]
        return max(sizeable, key=lambda f: float(f.inliers[:, :2].mean(axis=0) @ facing[:2]))
    raise ManipulationError("EMPTY_CLOUD", f"no vertical front of {cfg.min_front_points}+ points among the part's points")
