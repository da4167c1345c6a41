"""The physical grasping world: pybullet_data's Panda on the VoxPoser tabletop, with graspable
things from pybullet_data (the named objects and the procedurally generated random_urdfs) dropped
on the table at seeded random poses, seen by the tabletop's four RGB-D cameras.

What the planners get is what the cameras see: per object, the depth pixels its segmentation mask
covers, back-projected to the world (segmentation from the simulator's masks, geometry from
depth), and the table's pixels likewise. The arm is driven through `PandaHand`, the Arm protocol
of manipulation/pick_executor.py, with its reach checked on a kinematic copy of the arm in a second
PyBullet client so that checking never disturbs the physical one.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.bodies.sensing import sensing_named
from conceptagent_ros.bodies.tabletop.shapes import parse_shape, shape_urdf_file
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.manipulation.clouds import voxel_thin
from conceptagent_ros.manipulation.hand_frame import parse_tool_axes, tool_rotation
from conceptagent_ros.perception.geometry import noisy_mask_points
from conceptagent_ros.voxposer.physics_client import PhysicsClient
from conceptagent_ros.voxposer.tabletop import ARM_JOINTS, EE_LINK, REST_POSE, CabinetSpec, Tabletop, TabletopScene, UrdfObject

# name -> (URDF relative to pybullet_data, scale): the named objects, at their own size
NAMED_OBJECTS: dict[str, tuple[str, float]] = {
    "duck": ("duck_vhacd.urdf", 1.0), "teddy": ("teddy_vhacd.urdf", 1.0), "mug": ("objects/mug.urdf", 1.0),
    "lego": ("lego/lego.urdf", 1.0), "jenga": ("jenga/jenga.urdf", 1.0), "sphere": ("sphere_small.urdf", 1.0),
    "cube": ("cube_small.urdf", 1.0),
}
# random_urdfs are ~10 cm across, wider than the Panda's 8 cm hand: scaled to ~6 cm, as a hand of
# that size would meet such things
RANDOM_SCALE = 0.6
RANDOM_COUNT = 1000
# the hand frame (manipulation/hand_frame.py) sits half a finger deep between the fingers; the Panda's
# grasp target link is this much further along the approach
TOOL_OFFSET = 0.02
AREA_LOWER, AREA_UPPER = (0.40, -0.18), (0.62, 0.18)  # where things are dropped
CAMERA_SIZE = (256, 192)
HAND_TURN_TOLERANCE = np.radians(12.0)
# metres (PyBullet's rolling friction: the resisting torque over the normal force). Without it a can
# lying on its side, nudged as it is set down, rolled on for good: off the table before the hand came
ROLLING_FRICTION = 0.001


def object_urdf(spec: str) -> tuple[str, float]:
    """`duck`, ... or `random:N`: its URDF (pybullet_data relative) and scale; `shape:FAMILY:N`: the
    generated shape's URDF file (bodies/tabletop/shapes.py), at its own size."""
    if spec in NAMED_OBJECTS:
        return NAMED_OBJECTS[spec]
    if spec.startswith("shape:"):
        try:
            return shape_urdf_file(parse_shape(spec)), 1.0
        except ValueError as e:
            raise ConceptAgentError(str(e)) from None
    if spec.startswith("random:"):
        index = int(spec.split(":", 1)[1])
        if not 0 <= index < RANDOM_COUNT:
            raise ConceptAgentError(f"random_urdfs run 0..{RANDOM_COUNT - 1}; got {index}")
        return f"random_urdfs/{index:03d}/{index:03d}.urdf", RANDOM_SCALE
    raise ConceptAgentError(f"unknown object {spec!r}: one of {', '.join(NAMED_OBJECTS)}, random:N or shape:FAMILY:N")


def _drop_poses(count: int, rng: np.random.Generator, spacing: float = 0.11,
                keep_clear: TraySpec | None = None) -> list[tuple[float, float, float]]:
    """(x, y, yaw) for `count` things, at least `spacing` apart (and off the tray) where the area allows."""
    poses: list[tuple[float, float, float]] = []
    for _ in range(count):
        for _try in range(200):
            x, y = rng.uniform(AREA_LOWER[0], AREA_UPPER[0]), rng.uniform(AREA_LOWER[1], AREA_UPPER[1])
            clear_of_tray = keep_clear is None or not keep_clear.inside(np.array([x, y]), margin=-0.08)
            if clear_of_tray and all((x - px) ** 2 + (y - py) ** 2 >= spacing ** 2 for px, py, _ in poses):
                break
        poses.append((float(x), float(y), float(rng.uniform(-np.pi, np.pi))))
    return poses


@dataclass(frozen=True)
class TraySpec:
    """A small open tray standing on the table: a floor and four walls, fixed in place."""

    centre: tuple[float, float]
    inner: tuple[float, float] = (0.16, 0.14)  # inside length (x) and width (y)
    wall_height: float = 0.035
    wall: float = 0.008  # thickness of floor and walls

    def inside(self, point: np.ndarray, margin: float = 0.0) -> bool:
        """Whether an (x, y) lies within the walls' inner faces, `margin` in from them."""
        return (abs(float(point[0]) - self.centre[0]) <= self.inner[0] / 2 - margin
                and abs(float(point[1]) - self.centre[1]) <= self.inner[1] / 2 - margin)


class GraspWorld:
    """`GraspWorld(["duck", "random:12"], seed)`: the things dropped and settled on the table (and,
    with `tray`, a tray standing apart from them). `placed`: things put where they say instead (a
    scene file's layout), beside any dropped ones."""

    def __init__(self, objects: list[str], seed: int, gui: bool = False, tray: TraySpec | None = None,
                 cabinet: CabinetSpec | None = None, placed: Sequence[UrdfObject] = (), sensing: str = "ideal"):
        rng = np.random.default_rng(seed)
        # realistic: the four cameras' depth through the RGB-D noise model (their poses are fixed and known)
        depth_noise = sensing_named(sensing).depth_noise
        things = list(placed)
        for (x, y, yaw), spec in zip(_drop_poses(len(objects), rng, keep_clear=tray), objects):
            urdf, scale = object_urdf(spec)
            tumble = Rotation.from_euler("xyz", [0.0, 0.0, yaw]).as_quat()
            # a generated shape is set down just above the table, lying as its family says (dropped
            # from 8 cm, an upright can tips over); the others are dropped
            z = parse_shape(spec).extent[2] / 2 + 0.003 if spec.startswith("shape:") else 0.08
            things.append(UrdfObject(spec, urdf, (x, y, z), tuple(tumble), scale))  # type: ignore[arg-type]
        self.table = Tabletop(TabletopScene(objects=tuple(things), cabinet=cabinet), gui=gui, camera_size=CAMERA_SIZE,
                              depth_noise=depth_noise, seed=seed)
        p, c = self.table.p, self.table.client
        self.tray = tray
        self.tray_bodies = self._build_tray(tray) if tray is not None else []
        for body in self.table.things.values():
            p.changeDynamics(body, -1, lateralFriction=1.0, spinningFriction=0.002, rollingFriction=ROLLING_FRICTION,
                             physicsClientId=c)
        for finger in (9, 10):
            p.changeDynamics(self.table.robot, finger, lateralFriction=1.2, physicsClientId=c)
        self.table.step(480)  # two seconds: dropped things come to rest
        self.kinematics = PandaKinematics()

    def _build_tray(self, tray: TraySpec) -> list[int]:
        p, c = self.table.p, self.table.client
        (cx, cy), (lx, ly), h, t = tray.centre, tray.inner, tray.wall_height, tray.wall
        boxes = [((cx, cy, t / 2), (lx / 2 + t, ly / 2 + t, t / 2))]  # the floor
        for side in (-1, 1):
            boxes.append(((cx + side * (lx / 2 + t / 2), cy, h / 2), (t / 2, ly / 2 + t, h / 2)))
            boxes.append(((cx, cy + side * (ly / 2 + t / 2), h / 2), (lx / 2, t / 2, h / 2)))
        bodies = []
        for centre, half in boxes:
            shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=list(half), physicsClientId=c)
            visual = p.createVisualShape(p.GEOM_BOX, halfExtents=list(half), rgbaColor=[0.3, 0.5, 0.8, 1],
                                         physicsClientId=c)
            bodies.append(p.createMultiBody(0, shape, visual, list(centre), physicsClientId=c))
        return bodies

    @property
    def objects(self) -> list[str]:
        return list(self.table.things)

    def perceive(self) -> dict[str, np.ndarray]:
        """Per object (and "table"), the world points its pixels cover in the four cameras."""
        tabletop = self.table
        seen: dict[str, list[np.ndarray]] = {}
        bodies = {name: [body] for name, body in tabletop.things.items()}
        bodies["table"] = [tabletop.table_id]
        if self.tray_bodies:
            bodies["tray"] = self.tray_bodies
        # the cabinet by part: its carcass ("cabinet") and each drawer, a link of its own
        parts = {name: key for key, name in tabletop.names.items() if tabletop.cabinet is not None
                 and key[0] == tabletop.cabinet}
        for camera in tabletop.cameras:
            shot = tabletop.render(camera)
            world, body_ids, link_ids = shot.points, shot.bodies, shot.links
            returned = np.isfinite(world).all(axis=-1)  # realistic depth has holes (edges, grazing rays)
            for name, ids in bodies.items():
                mask = np.isin(body_ids, ids) & returned
                points = self._points(world, mask, name in tabletop.things)
                if len(points):  # a camera seeing a small thing in a handful of noisy pixels gives none
                    seen.setdefault(name, []).append(points)
            for name, (body, link) in parts.items():
                mask = (body_ids == body) & (link_ids == link) & returned
                if mask.any():
                    # a drawer's handle bar is two or three pixels across: its mask is not thinned
                    seen.setdefault(name, []).append(world[mask])
        clouds = {name: np.concatenate(parts) for name, parts in seen.items()}
        if "table" in clouds:
            clouds["table"] = voxel_thin(clouds["table"], 0.01)
        return clouds

    def _points(self, world: np.ndarray, mask: np.ndarray, item: bool) -> np.ndarray:
        """A mask's points; with realistic depth less its outline and stray bits, as the household
        body sees (a held cube's points, seen with the outline, spread 0.6 m along the rays past its edge)."""
        return noisy_mask_points(world, mask, item) if self.table.depth_noise is not None else world[mask]

    def locate(self, name: str) -> np.ndarray | None:
        """Where the cameras see the object now (the centre of its points); None if unseen."""
        seen = self.perceive().get(name)
        return None if seen is None or len(seen) == 0 else seen.mean(axis=0)

    def hand(self, joint_space_fallback: bool = False) -> PandaHand:
        return PandaHand(self.table, self.kinematics if joint_space_fallback else None)

    def close(self) -> None:
        self.kinematics.close()
        self.table.close()


PANDA_TOOL_AXES = parse_tool_axes(("-y", "x", "z"))  # the grasp target: fingers move along its y, it points along z


def _panda_orientation(rotation: np.ndarray) -> np.ndarray:
    """The Panda grasp target's quaternion for a hand frame."""
    return Rotation.from_matrix(tool_rotation(rotation, PANDA_TOOL_AXES)).as_quat()


@dataclass
class PandaHand:
    """The Arm protocol on the tabletop's Panda. Moves are straight lines of the hand (the
    tabletop's IK tracking); where tracking from the present joints cannot get there (a large turn
    of the wrist, as from pointing down to pointing forward), the arm first goes in joint space to
    an IK solution within the joints' limits found on the kinematic copy, then finishes in a line."""

    table: Tabletop
    kinematics: PandaKinematics | None = None  # None: straight lines only (as the grasp and place benches ran)

    def move_hand(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        target = np.asarray(position, dtype=float) + rotation[:, 2] * TOOL_OFFSET
        orientation = _panda_orientation(rotation)
        if self.table.move_to(target, orientation, speed=speed):
            # With the kinematic copy at hand, the hand's turn is checked too: tracking can reach the
            # place with the wrist still a quarter turn off (after a pull at a drawer, say)
            if self.kinematics is None or self._turn_off(orientation) <= HAND_TURN_TOLERANCE:
                return True
        if self.kinematics is None:
            return False
        # the solution nearest the rest pose, reached through the rest pose: away from the table
        solution = self.kinematics.solve(target, orientation, list(REST_POSE))
        if solution is None:
            return False
        self._joint_move(list(REST_POSE))
        self._joint_move(solution)
        return self.table.move_to(target, orientation, speed=speed)

    def _turn_off(self, orientation: np.ndarray) -> float:
        """Radians between the hand's turn now and `orientation`; a parallel hand turned half about its
        approach is the same hand."""
        now = Rotation.from_quat(self.table.ee_quaternion())
        want = Rotation.from_quat(orientation)
        flipped = want * Rotation.from_euler("z", np.pi)
        return float(min((now.inv() * want).magnitude(), (now.inv() * flipped).magnitude()))

    def rest(self) -> None:
        """Back to the rest pose in joint space (hand up, pointing down): from a drawer's handle, a
        straight line to a grasp from above would have to turn the wrist on the way."""
        self._joint_move(list(REST_POSE))

    def _joint_move(self, goal: list[float], rad_per_s: float = 1.0) -> None:
        table, p, c = self.table, self.table.p, self.table.client
        now = [p.getJointState(table.robot, j, physicsClientId=c)[0] for j in ARM_JOINTS]
        steps = max(60, int(max(abs(a - b) for a, b in zip(goal, now)) / rad_per_s * 240))
        for k in range(1, steps + 1):
            for joint, a, b in zip(ARM_JOINTS, now, goal):
                p.setJointMotorControl2(table.robot, joint, p.POSITION_CONTROL, a + (b - a) * k / steps, force=240,
                                        physicsClientId=c)
            table.step(1)

    def open_hand(self) -> None:
        self.table.set_gripper(False)

    def close_hand(self) -> float:
        self.table.set_gripper(True)
        return self.table.finger_gap()

    def finger_gap(self) -> float:
        return self.table.finger_gap()

    def fingers_feel(self) -> bool:
        """Both fingers touch something that is not the arm (the simulator's contacts)."""
        return self.table.fingers_touch()


class PandaKinematics(PhysicsClient):
    """A kinematic copy of the Panda in a PyBullet client of its own: is a hand pose reachable?"""

    def __init__(self, tolerance: float = 0.01, angle_tolerance_deg: float = 10.0):
        p = self.connect(False)
        self.robot = p.loadURDF("franka_panda/panda.urdf", [0, 0, 0], useFixedBase=True, physicsClientId=self.client)
        self.tolerance, self.angle_tolerance = tolerance, np.radians(angle_tolerance_deg)
        # IK that knows the joints' limits (PyBullet's null-space form needs every movable joint)
        movable = [j for j in range(p.getNumJoints(self.robot, physicsClientId=self.client))
                   if p.getJointInfo(self.robot, j, physicsClientId=self.client)[2] != p.JOINT_FIXED]
        self.movable = movable
        info = [p.getJointInfo(self.robot, j, physicsClientId=self.client) for j in movable]
        self.lower = [float(i[8]) for i in info]
        self.upper = [float(i[9]) for i in info]
        self.ranges = [u - lo for lo, u in zip(self.lower, self.upper)]

    def solve(self, target: np.ndarray, orientation: np.ndarray, start: list[float], tries: int = 30) -> list[float] | None:
        """Arm joint angles within their limits that put the grasp target link at `target` with
        `orientation`: IK from the present joints, then from seeded random ones; the solution
        nearest the present joints, or None."""
        p, c = self.p, self.client
        rng = np.random.default_rng(0)
        best: tuple[float, list[float]] | None = None
        for attempt in range(tries):
            seed = list(start) + [0.02, 0.02] if attempt == 0 else [rng.uniform(lo, u) for lo, u in
                                                                     zip(self.lower, self.upper)]
            for joint, angle in zip(self.movable, seed):
                p.resetJointState(self.robot, joint, angle, physicsClientId=c)
            for _ in range(3):  # IK from its own last answer converges in a few rounds
                joints = list(p.calculateInverseKinematics(
                    self.robot, EE_LINK, list(target), list(orientation), lowerLimits=self.lower,
                    upperLimits=self.upper, jointRanges=self.ranges, restPoses=seed, maxNumIterations=200,
                    residualThreshold=1e-5, physicsClientId=c))
                for joint, angle in zip(self.movable, joints):
                    p.resetJointState(self.robot, joint, angle, physicsClientId=c)
            state = p.getLinkState(self.robot, EE_LINK, computeForwardKinematics=True, physicsClientId=c)
            turn = (Rotation.from_quat(state[5]).inv() * Rotation.from_quat(orientation)).magnitude()
            within = all(lo - 1e-3 <= q <= u + 1e-3 for q, lo, u in zip(joints, self.lower, self.upper))
            if within and np.linalg.norm(np.asarray(state[4]) - target) <= 0.005 and turn <= np.radians(5):
                arm = joints[:len(ARM_JOINTS)]
                distance = float(np.abs(np.asarray(arm) - np.asarray(start)).max())
                if best is None or distance < best[0]:
                    best = (distance, arm)
                if attempt == 0:
                    break
        return None if best is None else best[1]

    def reachable(self, position: np.ndarray, quaternion: np.ndarray) -> bool:
        """For a hand-frame pose (position, quaternion x y z w)."""
        p, c = self.p, self.client
        rotation = Rotation.from_quat(quaternion).as_matrix()
        target = np.asarray(position, dtype=float) + rotation[:, 2] * TOOL_OFFSET
        orientation = _panda_orientation(rotation)
        joints = p.calculateInverseKinematics(self.robot, EE_LINK, target.tolist(), orientation.tolist(),
                                              maxNumIterations=100, residualThreshold=1e-4, physicsClientId=c)
        for joint, angle in zip(ARM_JOINTS, joints):
            p.resetJointState(self.robot, joint, angle, physicsClientId=c)
        state = p.getLinkState(self.robot, EE_LINK, computeForwardKinematics=True, physicsClientId=c)
        error = float(np.linalg.norm(np.asarray(state[4]) - target))
        turn = (Rotation.from_quat(state[5]).inv() * Rotation.from_quat(orientation)).magnitude()
        return error <= self.tolerance and turn <= self.angle_tolerance
