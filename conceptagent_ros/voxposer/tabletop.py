"""A PyBullet tabletop for VoxPoser: pybullet_data's Franka Panda, coloured blocks and lines,
four RGB-D + segmentation cameras at the table's ends feeding `detect()`, inverse kinematics to
follow end-effector waypoints, and a parallel gripper.

World frame: x away from the robot ("front" of the table is +x), y to the robot's right ("right"
is +y), z up; the table top is z = 0. Nothing here knows the task templates: a scene is a list of
blocks and lines with colours and positions, chosen by the caller (voxposer/task_templates.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from conceptagent_ros.perception.depth_noise import DepthNoise
from conceptagent_ros.perception.pybullet_capture import Capture, capture, matrix, seen_through
from conceptagent_ros.voxposer.api import ObjectCloud, SceneSnapshot, VoxelGrid
from conceptagent_ros.voxposer.physics_client import PhysicsClient

COLOURS: dict[str, tuple[float, float, float]] = {
    "blue": (0.1, 0.3, 0.9), "green": (0.1, 0.7, 0.2), "yellow": (0.95, 0.85, 0.1), "pink": (1.0, 0.5, 0.7),
    "brown": (0.5, 0.3, 0.1), "red": (0.9, 0.1, 0.1), "orange": (1.0, 0.55, 0.0), "purple": (0.5, 0.2, 0.7),
    "white": (0.95, 0.95, 0.95), "black": (0.1, 0.1, 0.1), "cyan": (0.1, 0.8, 0.8), "gray": (0.5, 0.5, 0.5),
}
TABLE_LOWER = (0.25, -0.35, 0.0)  # the usable table top (x, y, z)
TABLE_UPPER = (0.75, 0.35, 0.0)
WORKSPACE_LOWER = (0.2, -0.4, -0.02)
WORKSPACE_UPPER = (0.8, 0.4, 0.5)
BLOCK_HALF = 0.02
EE_LINK = 11  # panda_grasptarget in pybullet_data's panda.urdf
ARM_JOINTS = tuple(range(7))
FINGER_JOINTS = (9, 10)
REST_POSE = (0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.785)
DOWN = (1.0, 0.0, 0.0, 0.0)  # gripper pointing down (x, y, z, w)


@dataclass(frozen=True)
class BlockSpec:
    name: str  # "blue block"
    colour: str
    xy: tuple[float, float]


@dataclass(frozen=True)
class LineSpec:
    name: str  # "blue line"
    colour: str
    start: tuple[float, float]
    end: tuple[float, float]


@dataclass(frozen=True)
class CabinetSpec:
    """A cabinet standing on the table with drawers stacked bottom to top, opening toward the robot (-x)."""

    front_x: float = 0.62  # the closed drawers' fronts
    y: float = 0.0
    drawers: int = 3
    opening: tuple[float, ...] = (0.0, 0.0, 0.0)  # metres each drawer (bottom first) is pulled out
    handles: bool = False  # a bar on each drawer's front, for a hand to pull by
    hollow: bool = False  # open-topped drawers (floor, front, back, sides) that things can be put in
    yaw: float = 0.0  # radians about the vertical through the front's middle; 0 opens toward -x
    handle_length: float = 0.10  # the bar's length (m)
    handle_standoff: float = 0.025  # how far the bar's middle stands out of the front (m)
    handle_thickness: float = 0.012  # the bar's square section (m)


DRAWER_NAMES = {3: ("bottom drawer", "middle drawer", "top drawer")}
CABINET_DEPTH, CABINET_WIDTH, DRAWER_HEIGHT = 0.16, 0.24, 0.08


@dataclass(frozen=True)
class UrdfObject:
    """A graspable thing from a URDF file (pybullet_data's objects, random_urdfs, your own)."""

    name: str
    urdf: str  # a path, or one relative to pybullet_data
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)  # x, y, z, w
    scale: float = 1.0
    fixed: bool = False  # a receptacle that stays put (a tray)


@dataclass(frozen=True)
class TabletopScene:
    blocks: tuple[BlockSpec, ...] = ()
    lines: tuple[LineSpec, ...] = ()
    grasped: str | None = None  # a block that starts in the gripper
    cabinet: CabinetSpec | None = None
    hand_start: tuple[float, float, float] | None = None  # where the end effector starts (else the rest pose)
    objects: tuple[UrdfObject, ...] = ()  # last: templates build scenes positionally


@dataclass
class Camera:
    eye: tuple[float, float, float]
    target: tuple[float, float, float]
    width: int = 128
    height: int = 96
    fov: float = 60.0
    near: float = 0.05
    far: float = 3.0
    view: np.ndarray = field(default=None)  # type: ignore[assignment, arg-type]
    projection: np.ndarray = field(default=None)  # type: ignore[assignment, arg-type]


class Tabletop(PhysicsClient):
    """One PyBullet world (DIRECT, or GUI with gui=True). Not thread-safe; one per process is simplest."""

    def __init__(self, scene: TabletopScene, gui: bool = False, sim_hz: int = 240,
                 camera_size: tuple[int, int] = (128, 96), depth_noise: DepthNoise | None = None,
                 seed: int = 0) -> None:
        """`depth_noise`: what each camera's depth goes through before its points are made
        (perception/depth_noise, drawn from a generator seeded by `seed`); None: the depth as rendered."""
        self.depth_noise = depth_noise
        self._noise_rng = np.random.default_rng([seed, 11])
        p = self.connect(gui)
        p.setGravity(0, 0, -9.81, physicsClientId=self.client)
        p.setTimeStep(1.0 / sim_hz, physicsClientId=self.client)
        self.dt = 1.0 / sim_hz
        self.grid = VoxelGrid(WORKSPACE_LOWER, WORKSPACE_UPPER, 100)
        self.scene = scene
        self.names: dict[tuple[int, int], str] = {}  # (body, link) -> name; link -1 is a body's base
        self._build(scene)
        self.cameras = self._cameras(*camera_size)
        self.gripper_closed = 0.0
        self.ee_trace: list[np.ndarray] = []
        self.speed_trace: list[float] = []
        self.block_trace: dict[str, list[np.ndarray]] = {name: [] for name in self.blocks}
        self.reset_to_default_pose()
        if scene.hand_start is not None:
            self._start_hand_at(np.asarray(scene.hand_start, dtype=float))
        if scene.grasped:
            self._start_grasped(scene.grasped)

    # -- building --------------------------------------------------------------------------------
    def _build(self, scene: TabletopScene) -> None:
        p, c = self.p, self.client
        p.loadURDF("plane.urdf", [0, 0, -0.63], physicsClientId=c)
        half = [(TABLE_UPPER[0] - TABLE_LOWER[0]) / 2 + 0.1, (TABLE_UPPER[1] - TABLE_LOWER[1]) / 2 + 0.1, 0.3]
        centre = [(TABLE_UPPER[0] + TABLE_LOWER[0]) / 2, (TABLE_UPPER[1] + TABLE_LOWER[1]) / 2, -0.3]
        table = p.createMultiBody(0, p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=c),
                                  p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=[0.8, 0.7, 0.55, 1],
                                                      physicsClientId=c), centre, physicsClientId=c)
        self.table_id = table
        self.robot = p.loadURDF("franka_panda/panda.urdf", [0, 0, 0], useFixedBase=True, physicsClientId=c)
        self.blocks: dict[str, int] = {}
        for block in scene.blocks:
            shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[BLOCK_HALF] * 3, physicsClientId=c)
            visual = p.createVisualShape(p.GEOM_BOX, halfExtents=[BLOCK_HALF] * 3,
                                         rgbaColor=[*COLOURS[block.colour], 1], physicsClientId=c)
            body = p.createMultiBody(0.1, shape, visual, [block.xy[0], block.xy[1], BLOCK_HALF], physicsClientId=c)
            p.changeDynamics(body, -1, lateralFriction=1.0, physicsClientId=c)
            self.blocks[block.name] = body
            self.names[(body, -1)] = block.name
        for line in scene.lines:
            a, b = np.asarray(line.start), np.asarray(line.end)
            length = float(np.linalg.norm(b - a))
            yaw = float(np.arctan2(*(b - a)[::-1]))
            visual = p.createVisualShape(p.GEOM_BOX, halfExtents=[length / 2, 0.008, 0.001],
                                         rgbaColor=[*COLOURS[line.colour], 1], physicsClientId=c)
            mid = (a + b) / 2
            body = p.createMultiBody(0, -1, visual, [mid[0], mid[1], 0.001],
                                     p.getQuaternionFromEuler([0, 0, yaw]), physicsClientId=c)
            self.names[(body, -1)] = line.name
        self.things: dict[str, int] = {}
        for thing in scene.objects:
            body = p.loadURDF(thing.urdf, list(thing.position), list(thing.orientation), globalScaling=thing.scale,
                              useFixedBase=thing.fixed, physicsClientId=c)
            self.things[thing.name] = body
            for link in range(-1, p.getNumJoints(body, physicsClientId=c)):
                self.names[(body, link)] = thing.name
        self.cabinet: int | None = None
        if scene.cabinet is not None:
            self._build_cabinet(scene.cabinet)

    def _build_cabinet(self, spec: CabinetSpec) -> None:
        """A fixed carcass (base) and one prismatic link per drawer; joint 0 is closed, negative is open."""
        p, c = self.p, self.client
        height = DRAWER_HEIGHT * spec.drawers + 0.02
        carcass_half = [CABINET_DEPTH / 2, CABINET_WIDTH / 2, height / 2]
        drawer_half = [CABINET_DEPTH / 2 - 0.01, CABINET_WIDTH / 2 - 0.02, DRAWER_HEIGHT / 2 - 0.005]
        # the carcass centre behind the front's middle, turned by the yaw about that middle
        behind = CABINET_DEPTH / 2 + 0.005
        base_pos = [spec.front_x + behind * math.cos(spec.yaw), spec.y + behind * math.sin(spec.yaw), height / 2]
        n = spec.drawers
        if spec.handles or spec.hollow:
            front = -drawer_half[0]
            if spec.hollow:  # a 6 mm floor and walls: the box's faces without its top
                t = 0.003
                dx, dy, dz = drawer_half
                parts = [([dx, dy, t], [0.0, 0.0, -dz + t]), ([t, dy, dz], [front + t, 0.0, 0.0]),
                         ([t, dy, dz], [dx - t, 0.0, 0.0]), ([dx, t, dz], [0.0, dy - t, 0.0]),
                         ([dx, t, dz], [0.0, -dy + t, 0.0])]
            else:
                parts = [(drawer_half, [0.0, 0.0, 0.0])]
            if spec.handles:
                # a bar (10 cm long, 1.2 cm thick, 2.5 cm proud of the front by default) on two posts
                t, out, half_length = spec.handle_thickness / 2, spec.handle_standoff, spec.handle_length / 2
                bar_half, post_half = [t, half_length, t], [out / 2, t, t]
                parts += [(bar_half, [front - out, 0.0, 0.0]), (post_half, [front - out / 2, half_length - t, 0.0]),
                          (post_half, [front - out / 2, -(half_length - t), 0.0])]
            colours = [[0.85, 0.85, 0.8, 1]] * (len(parts) - 3 * spec.handles) + [[0.3, 0.3, 0.3, 1]] * (3 * spec.handles)
            drawer_shape = p.createCollisionShapeArray([p.GEOM_BOX] * len(parts), halfExtents=[h for h, _ in parts],
                                                       collisionFramePositions=[f for _, f in parts], physicsClientId=c)
            drawer_visual = p.createVisualShapeArray([p.GEOM_BOX] * len(parts), halfExtents=[h for h, _ in parts],
                                                     visualFramePositions=[f for _, f in parts], rgbaColors=colours,
                                                     physicsClientId=c)
        else:
            drawer_shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=drawer_half, physicsClientId=c)
            drawer_visual = p.createVisualShape(p.GEOM_BOX, halfExtents=drawer_half, rgbaColor=[0.85, 0.85, 0.8, 1],
                                                physicsClientId=c)
        # each drawer's origin relative to the carcass centre: its front flush with the carcass front when closed
        origins = [[drawer_half[0] - CABINET_DEPTH / 2 - 0.005, 0.0, -height / 2 + 0.01 + DRAWER_HEIGHT * (k + 0.5)]
                   for k in range(n)]
        self.cabinet = p.createMultiBody(
            0, p.createCollisionShape(p.GEOM_BOX, halfExtents=[carcass_half[0] - 0.005, carcass_half[1], carcass_half[2]],
                                      collisionFramePosition=[0.005, 0, 0], physicsClientId=c),
            p.createVisualShape(p.GEOM_BOX, halfExtents=carcass_half, rgbaColor=[0.45, 0.3, 0.2, 1], physicsClientId=c),
            base_pos, p.getQuaternionFromEuler([0.0, 0.0, spec.yaw]), linkMasses=[0.5] * n,
            linkCollisionShapeIndices=[drawer_shape] * n,
            linkVisualShapeIndices=[drawer_visual] * n, linkPositions=origins, linkOrientations=[[0, 0, 0, 1]] * n,
            linkInertialFramePositions=[[0, 0, 0]] * n, linkInertialFrameOrientations=[[0, 0, 0, 1]] * n,
            linkParentIndices=[0] * n, linkJointTypes=[p.JOINT_PRISMATIC] * n, linkJointAxis=[[1, 0, 0]] * n,
            physicsClientId=c)
        names = DRAWER_NAMES.get(n) or tuple(f"drawer {k + 1}" for k in range(n))
        self.names[(self.cabinet, -1)] = "cabinet"
        for k in range(n):
            self.names[(self.cabinet, k)] = names[k]
            p.resetJointState(self.cabinet, k, -spec.opening[k], physicsClientId=c)
            p.changeDynamics(self.cabinet, k, jointLowerLimit=-0.14, jointUpperLimit=0.0, linearDamping=5.0,
                             physicsClientId=c)
            # joint friction: a drawer stays where it is left and moves only when pushed
            p.setJointMotorControl2(self.cabinet, k, p.VELOCITY_CONTROL, targetVelocity=0, force=3.0, physicsClientId=c)

    def drawer_opening(self, name: str) -> float:
        """How far (m) the named drawer is pulled out."""
        for (body, link), known in self.names.items():
            if known == name and body == self.cabinet and link >= 0:
                return -float(self.p.getJointState(body, link, physicsClientId=self.client)[0])
        raise KeyError(name)

    def _cameras(self, width: int, height: int) -> list[Camera]:
        p = self.p
        mid = ((TABLE_UPPER[0] + TABLE_LOWER[0]) / 2, (TABLE_UPPER[1] + TABLE_LOWER[1]) / 2, 0.0)
        eyes = [(mid[0] + 0.7, mid[1], 0.6), (mid[0] - 0.45, mid[1], 0.8), (mid[0], mid[1] + 0.7, 0.6),
                (mid[0], mid[1] - 0.7, 0.6)]
        cameras = []
        for eye in eyes:
            cam = Camera(eye, mid, width, height)
            cam.view = matrix(p.computeViewMatrix(eye, mid, [0, 0, 1]))
            cam.projection = matrix(p.computeProjectionMatrixFOV(cam.fov, cam.width / cam.height, cam.near, cam.far))
            cameras.append(cam)
        return cameras

    # -- sensing ---------------------------------------------------------------------------------
    def render(self, camera: Camera) -> Capture:
        """The camera's image: colour, world points and per pixel the body and link it shows."""
        shot = capture(self.p, self.client, camera.view, camera.projection, camera.width, camera.height)
        if self.depth_noise is None:
            return shot
        return seen_through(shot, camera.view, camera.projection, self.depth_noise, self._noise_rng)

    def observe(self) -> SceneSnapshot:
        """Fuse the four cameras' segmented points per object into a snapshot for the map programs."""
        clouds: dict[str, list[np.ndarray]] = {}
        for camera in self.cameras:
            shot = self.render(camera)
            body_ids, link_ids = shot.bodies, shot.links
            for (body, link), name in self.names.items():
                mask = (body_ids == body) & (link_ids == link) & np.isfinite(shot.points).all(axis=-1)
                if mask.any():
                    clouds.setdefault(name, []).append(shot.points[mask])
        objects = tuple(ObjectCloud(name, np.concatenate(parts)) for name, parts in sorted(clouds.items()))
        return SceneSnapshot(self.grid, objects, tuple(self.ee_position()), tuple(self.ee_quaternion()),
                             self.gripper_closed, TABLE_LOWER, TABLE_UPPER)

    def ee_position(self) -> np.ndarray:
        return np.asarray(self.p.getLinkState(self.robot, EE_LINK, physicsClientId=self.client)[4])

    def ee_quaternion(self) -> np.ndarray:
        return np.asarray(self.p.getLinkState(self.robot, EE_LINK, physicsClientId=self.client)[5])

    def block_position(self, name: str) -> np.ndarray:
        return np.asarray(self.p.getBasePositionAndOrientation(self.blocks[name], physicsClientId=self.client)[0])

    # -- acting ----------------------------------------------------------------------------------
    def reset_to_default_pose(self) -> None:
        for joint, angle in zip(ARM_JOINTS, REST_POSE):
            self.p.resetJointState(self.robot, joint, angle, physicsClientId=self.client)
        self._set_fingers(self.gripper_closed, settle=False)
        for joint in FINGER_JOINTS:
            self.p.resetJointState(self.robot, joint, 0.04 * (1 - self.gripper_closed), physicsClientId=self.client)

    def set_gripper(self, closed: bool) -> None:
        """Close the fingers (on whatever is between them) or open them, and let them settle."""
        self._set_fingers(1.0 if closed else 0.0)

    def finger_gap(self) -> float:
        """The distance between the fingers (m): 0.08 open, about 0 closed on nothing."""
        return float(sum(self.p.getJointState(self.robot, j, physicsClientId=self.client)[0] for j in FINGER_JOINTS))

    def fingers_touch(self) -> bool:
        """Both fingers touch something that is not the arm (a contact point each)."""
        p, c = self.p, self.client
        return all(any(cp[2] != self.robot for cp in p.getContactPoints(bodyA=self.robot, linkIndexA=finger,
                                                                        physicsClientId=c))
                   for finger in FINGER_JOINTS)

    def _set_fingers(self, closed: float, settle: bool = True) -> None:
        self.gripper_closed = float(closed >= 0.5)
        width = 0.0 if self.gripper_closed else 0.04
        for joint in FINGER_JOINTS:
            self.p.setJointMotorControl2(self.robot, joint, self.p.POSITION_CONTROL, width, force=40,
                                         physicsClientId=self.client)
        if settle:
            self.step(60)

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self.p.stepSimulation(physicsClientId=self.client)

    def move_to(self, position: np.ndarray, quaternion: np.ndarray | None = None, speed: float = 1.0,
                gripper: float | None = None, base_speed: float = 0.25) -> bool:
        """Drive the end effector to `position` at `speed` x base_speed m/s through IK; True if reached within 1.5 cm."""
        if gripper is not None and float(gripper >= 0.5) != self.gripper_closed:
            self._set_fingers(gripper)
        goal = np.asarray(position, dtype=float)
        quat = DOWN if quaternion is None else tuple(quaternion)
        start = self.ee_position()
        distance = float(np.linalg.norm(goal - start))
        speed = float(np.clip(speed, 0.05, 4.0))
        steps = max(4, int(distance / (base_speed * speed) / self.dt))
        for n in range(1, steps + 1):
            target = start + (goal - start) * (n / steps)
            self._track(target, quat)
            self.step(1)
            if n % 8 == 0 or n == steps:
                self.ee_trace.append(self.ee_position())
                self.speed_trace.append(base_speed * speed)
                for name in self.blocks:
                    self.block_trace[name].append(self.block_position(name))
        for _ in range(120):  # settle
            self._track(goal, quat)
            self.step(1)
            if np.linalg.norm(self.ee_position() - goal) < 0.005:
                break
        self.ee_trace.append(self.ee_position())
        self.speed_trace.append(0.0)
        return bool(np.linalg.norm(self.ee_position() - goal) < 0.015)

    def stop(self) -> None:
        """Hold the arm at its present joint angles."""
        p, c = self.p, self.client
        for joint in ARM_JOINTS:
            angle = p.getJointState(self.robot, joint, physicsClientId=c)[0]
            p.setJointMotorControl2(self.robot, joint, p.POSITION_CONTROL, angle, force=240, physicsClientId=c)
        self.step(10)

    def _track(self, target: np.ndarray, quat: tuple[float, ...]) -> None:
        p, c = self.p, self.client
        joints = p.calculateInverseKinematics(self.robot, EE_LINK, target.tolist(), list(quat), maxNumIterations=50,
                                              residualThreshold=1e-4, physicsClientId=c)
        for joint in ARM_JOINTS:
            p.setJointMotorControl2(self.robot, joint, p.POSITION_CONTROL, joints[joint], force=240, maxVelocity=3.0,
                                    physicsClientId=c)

    def _start_hand_at(self, position: np.ndarray) -> None:
        """Put the arm where IK puts the end effector at `position` (no motion, nothing traced)."""
        for _ in range(5):  # IK from the last solution converges in a few resets
            for joint, angle in zip(ARM_JOINTS, self._ik(position)):
                self.p.resetJointState(self.robot, joint, angle, physicsClientId=self.client)
        for _ in range(30):
            self._track(position, DOWN)
            self.step(1)

    def _start_grasped(self, name: str) -> None:
        self._set_fingers(0.0, settle=False)
        above = self.block_position(name) + np.array([0, 0, 0.0])
        for joint, angle in zip(ARM_JOINTS, self._ik(above + np.array([0, 0, 0.0]))):
            self.p.resetJointState(self.robot, joint, angle, physicsClientId=self.client)
        self.step(30)
        self._set_fingers(1.0)
        self.move_to(self.ee_position() + np.array([0, 0, 0.15]), gripper=1.0)
        self.ee_trace.clear()
        self.speed_trace.clear()
        for trace in self.block_trace.values():
            trace.clear()

    def _ik(self, target: np.ndarray) -> list[float]:
        return list(self.p.calculateInverseKinematics(self.robot, EE_LINK, target.tolist(), list(DOWN),
                                                       maxNumIterations=100, physicsClientId=self.client))[:7]

