"""The robot's base driving in an exported world in PyBullet: conceptagent_mm (its description, arm
tucked upright) in the world the scene file exported, moved as a differential drive along a
planned path waypoint by waypoint (forward speed and turn rate limited, turning in place at each
bend, so corners are not cut into what the path kept clear of), stepped in simulated time. Every
step PyBullet's collision detection checks the whole robot against everything in the world;
touching anything ends the drive as BLOCKED, and not arriving in time as TIMEOUT. A base that
starts a drive touching something (a drive stopped by it, or an arm's work left it there) first
backs away from it along the contact's normal, as a robot's recovery backs off a bumper's hit:
otherwise every drive from there stopped on its first step.

The base is moved kinematically (its pose set each step, as a velocity-controlled base follows its
commands). With a `Localizer` (navigation/localization.py) it drives as a robot does: each step's
true motion is the command through the wheels' slip, the controller steers by the pose Monte Carlo
localization estimates from the odometry (the commands, dead-reckoned) and the lidar's scans (ray
casts from the description's laser_link), and arrival is judged on that estimate.
"""
from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from conceptagent_ros.navigation.localization import LikelihoodField, MonteCarloLocalization, Scan, WheelSlip
from conceptagent_ros.navigation.path_planner import PlannedPath
from conceptagent_ros.scene.geometry import Pose2D
from conceptagent_ros.world.occupancy_map import OccupancyMap
from conceptagent_ros.world.pybullet_world import load_world, quiet_native_output
from conceptagent_ros.world.robot_description import robot_urdf

# the arm straight up over the mast: within 0.11 m of the base's axis, so the base's radius bounds the robot
TUCKED = {"shoulder_pan_joint": 0.0, "shoulder_lift_joint": -1.8, "elbow_joint": 0.1, "wrist_1_joint": 0.41,
          "wrist_2_joint": 0.0, "wrist_3_joint": 0.0}


@dataclass(frozen=True)
class DriveLimits:
    speed: float = 0.5  # m/s
    turn_rate: float = 1.5  # rad/s
    dt: float = 0.05  # s of simulated time per step
    waypoint_tolerance: float = 0.05  # m: a waypoint passed this near is done (the path is followed, corners not cut)
    turn_in_place: float = 0.15  # rad of heading error above which the base stops and turns
    position_tolerance: float = 0.05  # m
    yaw_tolerance: float = 0.1  # rad


ARRIVED = "arrived"  # a DriveResult's message where the base got there with nothing to add


@dataclass(frozen=True)
class DriveResult:
    reached: bool
    code: str  # "" when reached, else BLOCKED or TIMEOUT
    message: str
    travelled: float  # metres the base moved
    seconds: float  # simulated
    pose: Pose2D


def _planar(pose: Pose2D) -> np.ndarray:
    """The 4 x 4 transform of a base at `pose` (a turn about z and a shift in the plane)."""
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    out = np.eye(4)
    out[:2, :2] = [[c, -s], [s, c]]
    out[:2, 3] = [pose.x, pose.y]
    return out


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


LIDAR = {"samples": 310, "half_fov": 2.7, "min_range": 0.12, "max_range": 12.0}  # the description's gpu_lidar
LIDAR_NOISE = 0.01  # metres, each range's standard deviation
SCAN_EVERY = 0.5  # seconds of driving between the localizer's scans
BACK_OFF_STEP = 0.01  # metres a base that starts a drive in contact backs off at a time
BACK_OFF_MOST = 0.15  # metres it backs off at most


@dataclass
class Localizer:
    """What the base knows of its pose while driving with localization: the particle filter, the
    odometry's own pose (the commands integrated), and the world's slip with its per-run bias."""

    mcl: MonteCarloLocalization
    slip: WheelSlip
    rng: np.random.Generator
    scale: tuple[float, float]
    odometry: Pose2D

    @classmethod
    def start(cls, grid: OccupancyMap, pose: Pose2D, seed: int, slip: WheelSlip | None = None) -> Localizer:
        slip = slip if slip is not None else WheelSlip()
        rng = np.random.default_rng([seed, 11])
        return cls(MonteCarloLocalization(LikelihoodField(grid), pose, rng), slip, rng, slip.drawn(rng), pose)

    @property
    def estimate(self) -> Pose2D:
        return self.mcl.estimate


class PyBulletBase:
    """The robot in the world of `sdf`, its base at `start`. Close it when done."""

    def __init__(self, sdf: Path, start: Pose2D, gui: bool = False):
        import pybullet as p

        self.p = p
        self.client = p.connect(p.GUI if gui else p.DIRECT)
        self.bodies = load_world(p, sdf, self.client)
        self.names = {body: name for name, body in self.bodies.items()}
        urdf = Path(tempfile.mkdtemp(prefix="conceptagent_base_")) / "conceptagent_mm.urdf"
        urdf.write_text(robot_urdf(gazebo=False))
        with quiet_native_output():
            self.robot = p.loadURDF(str(urdf), [start.x, start.y, 0.0], p.getQuaternionFromEuler([0, 0, start.yaw]),
                                    physicsClientId=self.client)
        for j in range(p.getNumJoints(self.robot, physicsClientId=self.client)):
            name = p.getJointInfo(self.robot, j, physicsClientId=self.client)[1].decode()
            if name in TUCKED:
                p.resetJointState(self.robot, j, TUCKED[name], physicsClientId=self.client)
        self._pose = start
        self._laser: int | None = None
        self.localizer: Localizer | None = None  # set: the base drives and turns as it believes it stands
        self.trail: list[tuple[float, float]] = [(start.x, start.y)]  # where the base drove, for pictures

    @property
    def pose(self) -> Pose2D:
        return self._pose

    @property
    def believed(self) -> Pose2D:
        """Where the base believes it stands: localization's estimate, or the true pose without it."""
        return self._pose if self.localizer is None else self.localizer.estimate

    def believed_from_true(self) -> np.ndarray:
        """The 4 x 4 transform taking a point of the simulator's world to where the robot, believing
        its base at `believed`, puts it: the identity without a localizer. What the camera sees and
        where the arm reaches are in this frame, as a robot's are in its map frame."""
        if self.localizer is None:
            return np.eye(4)
        return _planar(self.believed) @ np.linalg.inv(_planar(self._pose))

    def turn(self, turn: float) -> Pose2D:
        """Turn on the spot by `turn` radians as commanded: exactly without a localizer; with one, as
        the wheels slip, the odometry and the particles following and a scan correcting them (a
        turn on the spot is where odometry errs most). The believed pose after it."""
        if self.localizer is None:
            self.place(Pose2D(self._pose.x, self._pose.y, self._pose.yaw + turn))
            return self._pose
        return self._localized_step(self.localizer, 0.0, turn, True)

    def place(self, pose: Pose2D) -> None:
        self.p.resetBasePositionAndOrientation(self.robot, [pose.x, pose.y, 0.0],
                                               self.p.getQuaternionFromEuler([0, 0, pose.yaw]),
                                               physicsClientId=self.client)
        self._pose = pose

    def touching(self, ignore: Collection[int] = ()) -> set[str]:
        """What in the world the robot touches now (the floor aside, and the bodies in `ignore`: what
        the hand carries)."""
        return self.collisions(ignore)[0]

    def collisions(self, carried: Collection[int] = ()) -> tuple[set[str], set[str]]:
        """One collision pass: what the robot touches (the floor and the `carried` bodies aside), and
        what the bodies the hand carries touch, the robot aside and the floor included (a thing
        dragged along the floor is a collision too)."""
        p, c = self.p, self.client
        p.performCollisionDetection(physicsClientId=c)
        robot = {self.names.get(h[2], f"body {h[2]}") for h in p.getContactPoints(bodyA=self.robot, physicsClientId=c)
                 if h[8] < 0.0 and h[2] not in carried}
        held = {self.names.get(h[2], f"body {h[2]}") for body in carried
                for h in p.getContactPoints(bodyA=body, physicsClientId=c)
                if h[8] < 0.0 and h[2] != self.robot and h[2] not in carried}
        return robot - {"ground_plane"}, held

    def scan(self, rng: np.random.Generator) -> Scan:
        """The lidar's sweep now: rays cast from laser_link over its field of view at its height
        (what stands below or above that plane is not seen, as on the robot), ranges with
        LIDAR_NOISE; the robot's own parts, and nothing within range, give no return."""
        p, c = self.p, self.client
        origin, yaw = self._laser_pose()
        angles = np.linspace(-LIDAR["half_fov"], LIDAR["half_fov"], LIDAR["samples"])
        directions = np.stack([np.cos(yaw + angles), np.sin(yaw + angles), np.zeros_like(angles)], axis=1)
        starts = origin + directions * LIDAR["min_range"]
        ends = origin + directions * LIDAR["max_range"]
        hits = p.rayTestBatch(starts.tolist(), ends.tolist(), physicsClientId=c)
        span = LIDAR["max_range"] - LIDAR["min_range"]
        ranges = np.array([LIDAR["min_range"] + h[2] * span if h[0] not in (-1, self.robot) else np.inf for h in hits])
        ranges = ranges + rng.normal(0.0, LIDAR_NOISE, len(ranges)) * np.isfinite(ranges)
        return Scan(angles, ranges, LIDAR["max_range"])

    def _laser_pose(self) -> tuple[np.ndarray, float]:
        """Where laser_link is in the simulator's world, and its heading."""
        p, c = self.p, self.client
        if self._laser is None:
            self._laser = next(j for j in range(p.getNumJoints(self.robot, physicsClientId=c))
                               if p.getJointInfo(self.robot, j, physicsClientId=c)[12].decode() == "laser_link")
        state = p.getLinkState(self.robot, self._laser, computeForwardKinematics=True, physicsClientId=c)
        return np.asarray(state[4]), float(p.getEulerFromQuaternion(state[5])[2])

    def scan_on_map(self, rng: np.random.Generator) -> tuple[tuple[float, float], np.ndarray, np.ndarray]:
        """A sweep of the lidar as the robot puts it on its map, from where it believes it stands:
        the lidar's position (x, y), each beam's end (N x 2: where it came back, else at its range)
        and which came back."""
        scan = self.scan(rng)
        origin, yaw = self._laser_pose()
        reach = np.where(np.isfinite(scan.ranges), scan.ranges, scan.max_range)
        ends = np.column_stack([origin[0] + np.cos(yaw + scan.angles) * reach,
                                origin[1] + np.sin(yaw + scan.angles) * reach,
                                np.full(len(reach), origin[2]), np.ones(len(reach))])
        to_map = self.believed_from_true()
        ends = ends @ to_map.T
        start = to_map @ np.append(origin, 1.0)
        return (float(start[0]), float(start[1])), ends[:, :2], np.isfinite(scan.ranges)

    def drive(self, path: PlannedPath, goal_yaw: float, limits: DriveLimits = DriveLimits(),
              timeout: float | None = None, carried: Collection[int] = (),
              carry: Callable[[], None] | None = None) -> DriveResult:
        """Follow the path's waypoints to its last one, then turn to `goal_yaw`. `carry` is called
        after every move of the base (it puts what the hand holds, the bodies `carried`, with the
        hand); the robot touching those is not touching the world, but their touching the world is a
        collision: BLOCKED where the robot touches something, CARRY_COLLISION where what it carries does."""
        goal = path.goal
        budget = timeout if timeout is not None else 20.0 + 3.0 * path.length / limits.speed
        travelled, t, target = 0.0, 0.0, 1
        localizer = self.localizer
        self._back_off(carried, carry)
        pose = self.believed  # what the controller steers by
        since_scan = 0.0
        at_goal = False
        while True:
            if t > budget:
                return DriveResult(False, "TIMEOUT", f"not at ({goal[0]:.2f}, {goal[1]:.2f}) after {t:.0f} s",
                                   travelled, t, pose)
            to_goal = math.dist((pose.x, pose.y), goal)
            # stateful, as Nav2's goal checker is: once there, only the heading is left to fix (a
            # localized pose jitters by centimetres, and re-approaching chased it until the timeout)
            at_goal = at_goal or to_goal <= limits.position_tolerance
            if at_goal:
                error = _wrap(goal_yaw - pose.yaw)
                if abs(error) <= limits.yaw_tolerance:
                    return DriveResult(True, "", ARRIVED, travelled, t, pose)
                v, w = 0.0, math.copysign(min(limits.turn_rate, 2.0 * abs(error)), error)
            else:
                while target < len(path.waypoints) - 1 and \
                        math.dist((pose.x, pose.y), path.waypoints[target]) < limits.waypoint_tolerance:
                    target += 1
                aim = path.waypoints[min(target, len(path.waypoints) - 1)]  # a path of one point: its goal
                error = _wrap(math.atan2(aim[1] - pose.y, aim[0] - pose.x) - pose.yaw)
                if abs(error) > limits.turn_in_place:
                    v = 0.0
                else:
                    to_waypoint = math.dist((pose.x, pose.y), aim)
                    v = min(limits.speed, 1.5 * to_waypoint) * math.cos(error)
                w = max(-limits.turn_rate, min(limits.turn_rate, 3.0 * error))
            yaw = pose.yaw + w * limits.dt
            step = v * limits.dt
            if localizer is None:
                pose = Pose2D(pose.x + step * math.cos(yaw), pose.y + step * math.sin(yaw), _wrap(yaw))
                self.place(pose)
            else:
                pose = self._localized_step(localizer, step, w * limits.dt, since_scan >= SCAN_EVERY)
                since_scan = 0.0 if since_scan >= SCAN_EVERY else since_scan + limits.dt
            self.trail.append((self._pose.x, self._pose.y))
            if carry is not None:
                carry()
            travelled += abs(step)
            t += limits.dt
            hit, struck = self.collisions(carried)
            if hit:
                return DriveResult(False, "BLOCKED", f"the robot touched {', '.join(sorted(hit))} at "
                                                      f"({pose.x:.2f}, {pose.y:.2f})", travelled, t, pose)
            if struck:
                return DriveResult(False, "CARRY_COLLISION", f"what the hand carries touched {', '.join(sorted(struck))} "
                                                             f"at ({pose.x:.2f}, {pose.y:.2f})", travelled, t, pose)

    def _back_off(self, carried: Collection[int], carry: Callable[[], None] | None) -> None:
        """Back the base away from what it touches (along the contacts' normals, BACK_OFF_STEP at a
        time, BACK_OFF_MOST at most), the odometry and the particles following the motion."""
        p, c = self.p, self.client
        for _ in range(int(round(BACK_OFF_MOST / BACK_OFF_STEP))):
            p.performCollisionDetection(physicsClientId=c)
            normals = [h[7] for h in p.getContactPoints(bodyA=self.robot, physicsClientId=c)
                       if h[8] < 0.0 and h[2] not in carried and self.names.get(h[2]) != "ground_plane"]
            if not normals:
                return
            away = np.mean(np.asarray(normals, dtype=float), axis=0)[:2]  # on the other body, toward the robot
            norm = float(np.linalg.norm(away))
            if norm < 1e-6:
                return
            dx, dy = (float(v) for v in away / norm * BACK_OFF_STEP)
            now = self._pose
            self.place(Pose2D(now.x + dx, now.y + dy, now.yaw))
            if carry is not None:
                carry()
            localizer = self.localizer
            if localizer is not None:  # the wheels' motion, in the odometry's own frame
                odometry = localizer.odometry
                turn = odometry.yaw - now.yaw
                moved = Pose2D(odometry.x + dx * math.cos(turn) - dy * math.sin(turn),
                               odometry.y + dx * math.sin(turn) + dy * math.cos(turn), odometry.yaw)
                localizer.mcl.predict(odometry, moved)
                localizer.odometry = moved

    def _localized_step(self, localizer: Localizer, forward: float, turn: float, scan: bool) -> Pose2D:
        """One control step with localization: the base moves as its wheels slip, the odometry
        counts the command, the particles follow it, and a scan corrects them; the estimate."""
        self.place(localizer.slip.move(self._pose, forward, turn, localizer.scale, localizer.rng))
        before = localizer.odometry
        yaw = before.yaw + turn
        localizer.odometry = Pose2D(before.x + forward * math.cos(yaw), before.y + forward * math.sin(yaw), _wrap(yaw))
        localizer.mcl.predict(before, localizer.odometry)
        if scan:
            localizer.mcl.correct(self.scan(localizer.rng))
        return localizer.estimate

    def close(self) -> None:
        try:
            self.p.disconnect(self.client)
        except Exception:  # noqa: BLE001 - already gone
            pass
