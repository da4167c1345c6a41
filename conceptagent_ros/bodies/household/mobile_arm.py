"""The arm of conceptagent_mm (its description's six joints and parallel gripper) in PyBullet, as
the manipulation executors drive an arm (manipulation/pick_executor.Arm): the hand frame moved in
straight lines by IK tracking under position control, physics stepped at 240 Hz, so that what the
fingers close on is held (or slips) by friction, as on the tabletop's Panda.

Where tracking from the present joints cannot get there (a large turn of the wrist, from pointing
down to pointing forward), the arm goes in joint space to an IK solution within the joints' limits
found on a kinematic copy of the robot in a second PyBullet client (ArmKinematics: it also answers
the grasp planner's "can the hand be put there?"), then finishes in a straight line. Every move in
joint space (these, tucking, the ready pose) follows a path that keeps the arm out of the world and
off the robot's own base and mast (manipulation/joint_path on ArmClearance's checks against the
world's collision shapes): from the ready pose to a drawer's handle held level, interpolating the
joints swung the hand down through the cabinet's top.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.manipulation.hand_frame import parse_tool_axes, tool_rotation
from conceptagent_ros.manipulation.joint_path import plan_joint_path
from conceptagent_ros.world.robot_description import ARM_JOINTS, GRASP_LINK, TORSO_JOINT, TORSO_TRAVEL

# The description's grasp_link points along its x (the palm's way), its fingers move along its y:
# tool x = hand z (approach), tool y = hand x (closing), tool z = hand y (a finger's width)
MM_TOOL_AXES = parse_tool_axes(("z", "x", "y"))
FINGER_JOINTS = ("left_finger_joint", "right_finger_joint")
FINGER_OPEN = 0.08  # each finger's travel: the joint's upper limit
FINGER_FORCE = 60.0  # newtons per finger
ARM_FORCE = 300.0
# the hand 35 cm in front of the base's axis at 1.25 m, pointing down: above any counter the base
# stands at, clear of what is on it, where motions start and end
READY = {"shoulder_pan_joint": 0.0, "shoulder_lift_joint": -1.57, "elbow_joint": 0.97, "wrist_1_joint": 2.17,
         "wrist_2_joint": 0.0, "wrist_3_joint": 0.0}
SIM_HZ = 240
IDENTITY = np.eye(4)
FEEL_RANGE = 0.003  # metres between a finger and a thing within which the finger feels it
WATCH_EVERY = 24  # simulation steps (0.1 s) between the grip's checks of its contact (on_watch)
REACHED = 0.015  # metres: the hand stopped this near its goal got there
TURNED = math.radians(12.0)
MOST_AIM_PAST = 0.3  # radians a joint is commanded past its goal at most, to make up for sagging
WRIST_SWING = 1.0  # radians: a wrist turning further than this in a joint-space move turns on its own
ONWARD = 0.10  # metres on along the approach a joint-space move's goal posture is checked for (_clear_onward)
TORSO_FORCE = 3000.0  # newtons: the torso's drive holds the mast, the arm and what the hand carries
TORSO_SPEED = 0.15  # metres a second
TORSO_REACHED = 0.003  # metres


def joint_indices(p: Any, body: int, client: int) -> dict[str, int]:
    return {p.getJointInfo(body, j, physicsClientId=client)[1].decode(): j
            for j in range(p.getNumJoints(body, physicsClientId=client))}


def link_index(p: Any, body: int, client: int, name: str) -> int:
    for j in range(p.getNumJoints(body, physicsClientId=client)):
        if p.getJointInfo(body, j, physicsClientId=client)[12].decode() == name:
            return j
    raise KeyError(f"the robot has no link {name}")


def mm_orientation(rotation: np.ndarray) -> np.ndarray:
    """grasp_link's quaternion (x y z w) for a hand frame."""
    return Rotation.from_matrix(tool_rotation(rotation, MM_TOOL_AXES)).as_quat()


class ArmKinematics:
    """A kinematic copy of the robot in a PyBullet client of its own, its base where the real one's
    base is (`place_base`): IK within the joints' limits, and reach checks that never disturb the
    physical arm.

    `urdf` is the description with its torso fixed at its lowest (robot_urdf(torso_fixed=True)):
    the copy stands as much higher as the real torso is lifted, which puts its arm where the real
    arm is. PyBullet's IK moves every joint it can and does not hold one to a given value (limits
    set equal did not keep a prismatic torso still), so the torso is no joint of the copy."""

    def __init__(self, urdf: str, tolerance: float = 0.01, angle_tolerance_deg: float = 10.0):
        import pybullet as p

        from conceptagent_ros.world.pybullet_world import quiet_native_output

        self.p = p
        self.client = p.connect(p.DIRECT)
        with quiet_native_output():
            self.robot = p.loadURDF(urdf, [0, 0, 0], useFixedBase=True, physicsClientId=self.client)
        self.joints = joint_indices(p, self.robot, self.client)
        self.grasp_link = link_index(p, self.robot, self.client, GRASP_LINK)
        self.movable = [j for j in range(p.getNumJoints(self.robot, physicsClientId=self.client))
                        if p.getJointInfo(self.robot, j, physicsClientId=self.client)[2] != p.JOINT_FIXED]
        info = [p.getJointInfo(self.robot, j, physicsClientId=self.client) for j in self.movable]
        # a wheel is continuous (PyBullet gives it upper < lower): any turn
        self.lower = [float(i[8]) if i[9] > i[8] else -math.pi for i in info]
        self.upper = [float(i[9]) if i[9] > i[8] else math.pi for i in info]
        self.arm_slots = [self.movable.index(self.joints[name]) for name in ARM_JOINTS]
        self.tolerance, self.angle_tolerance = tolerance, math.radians(angle_tolerance_deg)

    def place_base(self, position: tuple[float, float, float], quaternion: tuple[float, ...], lift: float = 0.0) -> None:
        """The copy's base where the real base is, raised by the real torso's `lift` (metres)."""
        up = Rotation.from_quat(quaternion).apply([0.0, 0.0, lift])
        self.p.resetBasePositionAndOrientation(self.robot, (np.asarray(position, dtype=float) + up).tolist(),
                                               list(quaternion), physicsClientId=self.client)

    def track(self, current: list[float], target: np.ndarray, orientation: np.ndarray) -> list[float]:
        """Arm joint angles (ARM_JOINTS order) a step of straight-line tracking aims at: a few IK
        iterations from the arm's present angles `current`, with no limits (as the physical arm's
        own IK tracked before it had a torso)."""
        p, c = self.p, self.client
        for slot, q in zip(self.arm_slots, current):
            p.resetJointState(self.robot, self.movable[slot], q, physicsClientId=c)
        solution = p.calculateInverseKinematics(self.robot, self.grasp_link, target.tolist(), orientation.tolist(),
                                                maxNumIterations=50, residualThreshold=1e-4, physicsClientId=c)
        return [float(solution[slot]) for slot in self.arm_slots]

    def solve(self, target: np.ndarray, orientation: np.ndarray, start: list[float], tries: int = 12,
              tolerance: float = 0.005, angle: float = math.radians(5),
              clear: Callable[[list[float]], bool] | None = None) -> list[float] | None:
        """Arm joint angles (ARM_JOINTS order) within their limits that put grasp_link at `target`
        with `orientation`: IK from `start`, then from seeded random joints; the one nearest `start`.
        With `clear`, the nearest of those it passes (the arm touching nothing), if any does: IK
        alone chose a side grasp's elbow low, the forearm on the counter the hand reached over."""
        p, c = self.p, self.client
        rng = np.random.default_rng(0)
        best: tuple[float, list[float]] | None = None
        best_clear: tuple[float, list[float]] | None = None
        for attempt in range(tries):
            seed = [0.0] * len(self.movable)
            for slot, q in zip(self.arm_slots, start):
                seed[slot] = q
            if attempt:
                seed = [float(rng.uniform(lo, hi)) for lo, hi in zip(self.lower, self.upper)]
            for joint, q in zip(self.movable, seed):
                p.resetJointState(self.robot, joint, q, physicsClientId=c)
            joints: list[float] = seed
            for _ in range(3):  # IK from its own last answer converges in a few rounds
                joints = list(p.calculateInverseKinematics(
                    self.robot, self.grasp_link, list(target), list(orientation), lowerLimits=self.lower,
                    upperLimits=self.upper, jointRanges=[hi - lo for lo, hi in zip(self.lower, self.upper)],
                    restPoses=seed, maxNumIterations=200, residualThreshold=1e-5, physicsClientId=c))
                for joint, q in zip(self.movable, joints):
                    p.resetJointState(self.robot, joint, q, physicsClientId=c)
            state = p.getLinkState(self.robot, self.grasp_link, computeForwardKinematics=True, physicsClientId=c)
            turn = (Rotation.from_quat(state[5]).inv() * Rotation.from_quat(orientation)).magnitude()
            within = all(lo - 1e-3 <= q <= hi + 1e-3 for q, lo, hi in zip(joints, self.lower, self.upper))
            if within and np.linalg.norm(np.asarray(state[4]) - target) <= tolerance and turn <= angle:
                arm = [joints[slot] for slot in self.arm_slots]
                distance = float(np.abs(np.asarray(arm) - np.asarray(start)).max())
                if best is None or distance < best[0]:
                    best = (distance, arm)
                is_clear = clear is None or clear(arm)
                if is_clear and (best_clear is None or distance < best_clear[0]):
                    best_clear = (distance, arm)
                if attempt == 0 and is_clear:
                    break
        chosen = best_clear or best
        return None if chosen is None else chosen[1]

    def reachable(self, position: np.ndarray, quaternion: np.ndarray, start: list[float]) -> bool:
        """For a hand-frame pose (position, quaternion x y z w)."""
        rotation = Rotation.from_quat(quaternion).as_matrix()
        return self.solve(np.asarray(position, dtype=float), mm_orientation(rotation), start, tries=4,
                          tolerance=self.tolerance, angle=self.angle_tolerance) is not None

    def close(self) -> None:
        try:
            self.p.disconnect(physicsClientId=self.client)
        except Exception:  # noqa: BLE001 - already gone
            pass


SELF_LINKS = ("base_link", "mast_link", "camera_link", "laser_link")  # the robot's own, that the arm must miss
FAR_ARM_LINKS = ("forearm_link", "wrist_1_link", "wrist_2_link", "flange_link", "hand_link", "left_finger",
                 "right_finger")  # the arm's links that can fold back onto the robot
HAND_LINKS = ("hand_link", "left_finger", "right_finger", "grasp_link")
# metres: nearer than this is touching. Position control leaves the stretched arm 1-2 cm below its
# commanded pose, so a path checked with less margin put the hand on a cabinet's top it was to pass over
CLEARANCE = 0.03
HELD_LINK = -100  # stands for what the hand holds among an arm's contacts (ArmClearance.contacts)
# what the hand holds: its body, and its position and orientation in the grasp link's frame
Attached = tuple[int, tuple[float, ...], tuple[float, ...]]


def bodies_near(p: Any, client: int, lo: Any, hi: Any, margin: float) -> set[int]:
    """The bodies whose boxes overlap the box (lo, hi) grown by `margin`: the candidates a closest-
    points query then measures (Bullet's contact points come only within its 2 cm threshold)."""
    near = p.getOverlappingObjects((np.asarray(lo) - margin).tolist(), (np.asarray(hi) + margin).tolist(),
                                   physicsClientId=client) or []
    return {body for body, _ in near}


class ArmClearance:
    """Whether arm joint angles put the arm, or what the hand holds, into the world or onto the
    robot itself, checked on the physical world's own collision shapes: the arm's joints are set
    (the held thing put where the hand then holds it), contacts computed, and both put back as
    they were (nothing is stepped, so nothing else moves). Contacts present at the start or the
    goal of a move (the hand at a handle, a thing in the fingers, the held thing over its place)
    are allowed all along it. `attached` says what the hand holds (Grip.attachment)."""

    def __init__(self, p: Any, client: int, robot: int, arm_joints: list[int]):
        self.p, self.client, self.robot, self.arm_joints = p, client, robot, arm_joints
        self.attached: Callable[[], Attached | None] = lambda: None
        names = {p.getJointInfo(robot, j, physicsClientId=client)[12].decode(): j
                 for j in range(p.getNumJoints(robot, physicsClientId=client))}
        names["base_link"] = -1
        first = min(arm_joints)
        self.arm_links = {j for j in names.values() if j >= first}
        self.self_pairs = [(names[a], names[b]) for a in FAR_ARM_LINKS for b in SELF_LINKS if a in names and b in names]
        self.hand_links = {names[n] for n in HAND_LINKS if n in names} | {HELD_LINK}
        self.grasp_link = names.get("grasp_link", -1)

    def contacts(self, q: np.ndarray) -> set[tuple[int, int, int]]:
        """(arm link, other body, other link) touching at joint angles `q`."""
        p, c = self.p, self.client
        saved = [p.getJointState(self.robot, j, physicsClientId=c)[:2] for j in self.arm_joints]
        held = self.attached()
        held_saved = None
        for j, angle in zip(self.arm_joints, q):
            p.resetJointState(self.robot, j, float(angle), physicsClientId=c)
        try:
            if held is not None:
                body, local_position, local_orientation = held
                held_saved = (p.getBasePositionAndOrientation(body, physicsClientId=c),
                              p.getBaseVelocity(body, physicsClientId=c))
                hand = p.getLinkState(self.robot, self.grasp_link, computeForwardKinematics=True, physicsClientId=c)
                position, orientation = p.multiplyTransforms(hand[4], hand[5], local_position, local_orientation)
                p.resetBasePositionAndOrientation(body, position, orientation, physicsClientId=c)
            # the bodies near the arm's box, then their distance to each arm link (contact points
            # come only within Bullet's 2 cm contact threshold, less than CLEARANCE)
            p.performCollisionDetection(physicsClientId=c)
            boxes = np.array([p.getAABB(self.robot, link, physicsClientId=c) for link in self.arm_links])
            near = bodies_near(p, c, boxes[:, 0].min(axis=0), boxes[:, 1].max(axis=0), CLEARANCE)
            touching = set()
            for body in sorted(near - {self.robot}):
                touching |= {(cp[3], cp[2], cp[4]) for cp in p.getClosestPoints(self.robot, body, CLEARANCE,
                                                                                 physicsClientId=c)
                             if cp[3] in self.arm_links}
            for a, b in self.self_pairs:
                if p.getClosestPoints(self.robot, self.robot, CLEARANCE, a, b, physicsClientId=c):
                    touching.add((a, self.robot, b))
            if held is not None:
                around = bodies_near(p, c, *p.getAABB(held[0], physicsClientId=c), CLEARANCE)
                for body in sorted(around - {self.robot, held[0]}):
                    touching |= {(HELD_LINK, cp[2], cp[4]) for cp in p.getClosestPoints(held[0], body, CLEARANCE,
                                                                                         physicsClientId=c)}
        finally:
            for j, (angle, velocity) in zip(self.arm_joints, saved):
                p.resetJointState(self.robot, j, angle, velocity, physicsClientId=c)
            if held is not None and held_saved is not None:
                (position, orientation), (linear, angular) = held_saved
                p.resetBasePositionAndOrientation(held[0], position, orientation, physicsClientId=c)
                p.resetBaseVelocity(held[0], linear, angular, physicsClientId=c)
        return touching

    def links_clear(self, q: np.ndarray) -> bool:
        """The arm up to the wrist touches nothing at joint angles `q`: the hand and the fingers are
        let be near what they reach for (a thing, the counter under it)."""
        return not any(link not in self.hand_links for link, _, _ in self.contacts(q))

    def free_between(self, start: np.ndarray, goal: np.ndarray):  # noqa: ANN201 - a joint_path.Free
        allowed = self.contacts(start) | self.contacts(goal)
        return lambda q: not (self.contacts(q) - allowed)


class MobileArm:
    """The Arm protocol on the physical robot in client `client` (its base fixed where the base
    stands). `kinematics`: the copy used for reach checks and joint-space moves."""

    def __init__(self, p: Any, client: int, robot: int, kinematics: ArmKinematics):
        self.p, self.client, self.robot, self.kinematics = p, client, robot, kinematics
        self.joints = joint_indices(p, robot, client)
        self.arm = [self.joints[name] for name in ARM_JOINTS]
        self.fingers = [self.joints[name] for name in FINGER_JOINTS]
        self.grasp_link = link_index(p, robot, client, GRASP_LINK)
        for finger in self.fingers:
            p.changeDynamics(robot, finger, lateralFriction=1.2, spinningFriction=0.002, physicsClientId=client)
        self.fingers_closed = False
        self.held_fingers: tuple[float, ...] | None = None  # each finger's place while holding (hold_fingers_where_they_are)
        self.on_open: Callable[[], None] | None = None  # told before the hand opens (the body lets go of its grip)
        self.on_closed: Callable[[], None] | None = None  # told once the fingers have closed (the body grips)
        self.on_watch: Callable[[], None] | None = None  # told every WATCH_EVERY steps (the grip checks its contact)
        # the simulator's world to the frame the robot believes in (PyBulletBase.believed_from_true)
        self.believed_from_true: Callable[[], np.ndarray] = lambda: IDENTITY
        self._steps = 0
        self.finger_links = tuple(link_index(p, robot, client, name) for name in ("left_finger", "right_finger"))
        self.torso = self.joints[TORSO_JOINT]
        self._hold_torso(self.torso_height())
        self.sync_kinematics()
        self.clearance = ArmClearance(p, client, robot, self.arm)

    # -- state -----------------------------------------------------------------------------------
    def joint_angles(self) -> list[float]:
        return [self.p.getJointState(self.robot, j, physicsClientId=self.client)[0] for j in self.arm]

    def true_hand_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """The hand frame where PyBullet has it (what physics, grips and carrying work with)."""
        state = self.p.getLinkState(self.robot, self.grasp_link, computeForwardKinematics=True,
                                    physicsClientId=self.client)
        return np.asarray(state[4]), np.asarray(state[5])

    def hand_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """The hand frame where the robot believes it is (`believed_from_true`: its base as
        localization has it): what the arm's planners and skills work in."""
        return self._believed(*self.true_hand_pose())

    def _believed(self, position: Any, quaternion: Any) -> tuple[np.ndarray, np.ndarray]:
        correction = self.believed_from_true()
        if np.array_equal(correction, IDENTITY):
            return np.asarray(position, dtype=float), np.asarray(quaternion, dtype=float)
        turned = Rotation.from_matrix(correction[:3, :3]) * Rotation.from_quat(quaternion)
        return correction[:3, :3] @ np.asarray(position, dtype=float) + correction[:3, 3], turned.as_quat()

    def hand_rotation(self) -> np.ndarray:
        """The hand frame's rotation now (columns: closing, across, approach), as the planners give
        it to move_hand; hand_pose's quaternion is the description's grasp_link."""
        return Rotation.from_quat(self.hand_pose()[1]).as_matrix() @ MM_TOOL_AXES.T

    def finger_gap(self) -> float:
        return float(sum(self.p.getJointState(self.robot, j, physicsClientId=self.client)[0] for j in self.fingers))

    def torso_height(self) -> float:
        """Metres the torso has lifted the mast (the arm and the camera) above its lowest."""
        return float(self.p.getJointState(self.robot, self.torso, physicsClientId=self.client)[0])

    def _hold_torso(self, height: float) -> None:
        self.p.setJointMotorControl2(self.robot, self.torso, self.p.POSITION_CONTROL, height, force=TORSO_FORCE,
                                     maxVelocity=TORSO_SPEED, physicsClientId=self.client)

    def lift_torso(self, height: float) -> None:
        """The torso to `height` (metres, within its travel), the arm's joints held as they are;
        the caller has the arm where its rise or fall touches nothing (tucked over the base)."""
        goal = float(np.clip(height, 0.0, TORSO_TRAVEL))
        if abs(goal - self.torso_height()) > TORSO_REACHED:
            self._hold_torso(goal)
            for _ in range(int((abs(goal - self.torso_height()) / TORSO_SPEED + 1.0) * SIM_HZ)):
                self.step(1)
                if abs(goal - self.torso_height()) <= TORSO_REACHED:
                    break
        self.sync_kinematics()

    def reachable_at_lift(self, position: np.ndarray, quaternion: np.ndarray, lift: float) -> bool:
        """Whether the hand could be put at this pose (hand frame, x y z w) with the torso at `lift`
        (the copy stood that high for the question, then put back)."""
        base, turn = self._believed(*self.p.getBasePositionAndOrientation(self.robot, physicsClientId=self.client))
        self.kinematics.place_base(tuple(base), tuple(turn), lift)
        try:
            return self.kinematics.reachable(position, quaternion, self.joint_angles())
        finally:
            self.sync_kinematics()

    def sync_kinematics(self) -> None:
        """The copy's base where this robot believes its base is, as high as the torso lifts the arm."""
        position, quaternion = self._believed(*self.p.getBasePositionAndOrientation(self.robot, physicsClientId=self.client))
        self.kinematics.place_base(tuple(position), tuple(quaternion), self.torso_height())

    def reachable(self, position: np.ndarray, quaternion: np.ndarray) -> bool:
        return self.kinematics.reachable(position, quaternion, self.joint_angles())

    # -- motion ----------------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self._hold_fingers()
            self.p.stepSimulation(physicsClientId=self.client)
            self._steps += 1
            if self.on_watch is not None and self._steps % WATCH_EVERY == 0:
                self.on_watch()

    def hand_touches(self, besides: Collection[int] = ()) -> bool:
        """The hand or a finger touches something that is neither the robot nor in `besides` (what
        it carries)."""
        p, c = self.p, self.client
        p.performCollisionDetection(physicsClientId=c)
        hand = self.clearance.hand_links  # the description's hand links, looked up once
        return any(h[3] in hand and h[2] != self.robot and h[2] not in besides and h[8] < 0.0
                   for h in p.getContactPoints(bodyA=self.robot, physicsClientId=c))

    def held_near(self) -> bool:
        """What the hand holds is within CLEARANCE of something other than the robot: lifted inside
        a fridge, beside its wall or under the shelf above, where a joint-space move would drag it
        (and the fridge with it) through what it is near."""
        return any(link == HELD_LINK for link, _, _ in self.clearance.contacts(np.asarray(self.joint_angles())))

    def fingers_feel(self) -> bool:
        """Both fingers are on something that is not the robot: the simulator standing in for a
        gripper's grasp sense (a stall short of closed, a finger's force)."""
        return self.fingers_on(None)

    def fingers_on(self, body: int | None) -> bool:
        """Both fingers are within FEEL_RANGE of `body` (None: of anything but the robot). Held at
        their place, fingers rest on a thing without PyBullet reporting a contact point."""
        p, c = self.p, self.client

        def on(finger: int) -> bool:
            if body is not None:
                others: set[int] = {body}
            else:
                others = bodies_near(p, c, *p.getAABB(self.robot, finger, physicsClientId=c), FEEL_RANGE) - {self.robot}
            return any(p.getClosestPoints(bodyA=self.robot, bodyB=other, distance=FEEL_RANGE, linkIndexA=finger,
                                          physicsClientId=c) for other in others)

        return all(on(finger) for finger in self.finger_links)

    def hold_fingers_where_they_are(self, hold: bool) -> None:
        """Keep the closed fingers each where it stands now instead of squeezing on: while what they
        hold is carried rigidly with the hand (the base driving), squeezing on pushes them into it,
        as nothing there pushes back. Each finger keeps its own place: a thing held off the hand's
        middle has one finger further out than the other, and holding both at half the gap moved
        one off it. False: squeeze again."""
        self.held_fingers = tuple(self.p.getJointState(self.robot, j, physicsClientId=self.client)[0]
                                  for j in self.fingers) if hold else None

    def _hold_fingers(self) -> None:
        if self.fingers_closed and self.held_fingers is not None:
            widths = self.held_fingers
        else:
            widths = (0.0 if self.fingers_closed else FINGER_OPEN,) * len(self.fingers)
        for finger, width in zip(self.fingers, widths):
            self.p.setJointMotorControl2(self.robot, finger, self.p.POSITION_CONTROL, width, force=FINGER_FORCE,
                                         maxVelocity=0.2, physicsClientId=self.client)

    def set_arm(self, angles: dict[str, float]) -> None:
        """Put the arm at these joint angles at once (no motion: a start pose, the base driving)."""
        for name, q in angles.items():
            self.p.resetJointState(self.robot, self.joints[name], q, physicsClientId=self.client)
            self.p.setJointMotorControl2(self.robot, self.joints[name], self.p.POSITION_CONTROL, q, force=ARM_FORCE,
                                         physicsClientId=self.client)

    def _command(self, angles: list[float]) -> None:
        for joint, q in zip(self.arm, angles):
            self.p.setJointMotorControl2(self.robot, joint, self.p.POSITION_CONTROL, q, force=ARM_FORCE,
                                         maxVelocity=2.0, physicsClientId=self.client)

    def _track(self, target: np.ndarray, orientation: np.ndarray) -> None:
        self._command(self.kinematics.track(self.joint_angles(), target, orientation))

    def joint_move(self, goal: list[float], rad_per_s: float = 1.0) -> None:
        now = self.joint_angles()
        steps = max(60, int(max(abs(a - b) for a, b in zip(goal, now)) / rad_per_s * SIM_HZ))
        for k in range(1, steps + 1):
            self._command([a + (b - a) * k / steps for a, b in zip(now, goal)])
            self.step(1)
        # settle with integral action: position control leaves the stretched arm short of its goal
        # under its own weight and its load (0.12 rad at the shoulder, the hand 24 degrees off
        # pointing down over a coffee table), so aim past the goal by what is missing, within bounds
        target = np.asarray(goal, dtype=float)
        aim = target.copy()
        for _ in range(150):
            self._command(aim.tolist())
            self.step(1)
            error = target - np.asarray(self.joint_angles())
            if float(np.abs(error).max()) < 0.003:
                break
            aim = np.clip(aim + 0.05 * error, target - MOST_AIM_PAST, target + MOST_AIM_PAST)

    def _turn_off(self, orientation: np.ndarray) -> float:
        """Radians between the hand's turn now and `orientation`; a parallel hand turned half about
        its approach (grasp_link's x) is the same hand."""
        now = Rotation.from_quat(self.hand_pose()[1])
        want = Rotation.from_quat(orientation)
        flipped = want * Rotation.from_euler("x", math.pi)
        return float(min((now.inv() * want).magnitude(), (now.inv() * flipped).magnitude()))

    def _line(self, goal: np.ndarray, orientation: np.ndarray, speed: float) -> bool:
        start, _ = self.hand_pose()
        distance = float(np.linalg.norm(goal - start))
        steps = max(4, int(distance / (0.25 * float(np.clip(speed, 0.05, 4.0))) * SIM_HZ))
        for n in range(1, steps + 1):
            self._track(start + (goal - start) * (n / steps), orientation)
            self.step(1)
        aim = goal.copy()
        for _ in range(120):  # settle onto the goal
            self._track(aim, orientation)
            self.step(1)
            error = goal - self.hand_pose()[0]
            if np.linalg.norm(error) < 0.005:
                break
            # integral action: position control leaves the stretched arm sagging under its own weight
            # (2 cm at the reach of a table's far side), so aim past the goal by what is still missing
            aim = aim + 0.05 * error
        return self._there(goal, orientation)

    def move_hand(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        goal = np.asarray(position, dtype=float)
        orientation = mm_orientation(np.asarray(rotation, dtype=float))
        if self._turn_off(orientation) <= TURNED and self._line(goal, orientation, speed):
            return True
        self.sync_kinematics()
        approach = np.asarray(rotation, dtype=float)[:, 2]
        solution = self.kinematics.solve(goal, orientation, self.joint_angles(), tries=40,
                                         clear=lambda q: self._clear_onward(q, goal, orientation, approach))
        if solution is None:
            return False
        if not self.move_joints(solution):
            self._turn_then_reach(solution, goal)
        if self._there(goal, orientation):
            # the joint-space move put the hand there: tracking on from here with the unconstrained
            # IK of _line trades the hand's turn for position near a stretched wrist (16 degrees
            # off at a drawer's handle held level, 37 cm below the shoulder)
            return True
        return self._line(goal, orientation, speed)

    def move_hand_straight(self, position: np.ndarray, rotation: np.ndarray, speed: float = 1.0) -> bool:
        """The hand in a straight line to the pose, or not at all (False), for a hand that holds a
        door's handle: where the line ran out, move_hand's joint-space move swung the arm round to
        another branch and through the cabinet, shoving it 16 cm across the floor."""
        orientation = mm_orientation(np.asarray(rotation, dtype=float))
        return self._turn_off(orientation) <= TURNED and self._line(np.asarray(position, dtype=float), orientation, speed)

    def _clear_onward(self, q: list[float], goal: np.ndarray, orientation: np.ndarray, approach: np.ndarray) -> bool:
        """The arm up to the wrist touches nothing at `q`, nor where tracking from `q` takes it
        ONWARD metres on along the hand's approach (a pre-grasp's way in, a place's way down). A
        pre-grasp taken with the elbow low was clear itself, and on the way in the forearm came
        down onto the counter, the hand turned and a finger pushed the kettle aside."""
        if not self.clearance.links_clear(np.asarray(q)):
            return False
        ahead = self.kinematics.solve(goal + approach * ONWARD, orientation, list(q), tries=1)
        return ahead is None or self.clearance.links_clear(np.asarray(ahead))

    def _there(self, goal: np.ndarray, orientation: np.ndarray) -> bool:
        return bool(np.linalg.norm(self.hand_pose()[0] - goal) < REACHED) and self._turn_off(orientation) <= TURNED

    def _turn_then_reach(self, solution: list[float], goal: np.ndarray) -> None:
        """A joint-space move in two parts, so that the hand does not sweep through the counter it
        works over: going down, the wrist turns first where the hand is (up, at the ready pose) and
        then the shoulder and elbow lower it; going up, the other way round. (Interpolating every
        joint at once swung the hand through the sink's counter on its way from the ready pose to a
        hand held level over it.)"""
        now = self.joint_angles()
        if max(abs(a - b) for a, b in zip(now[3:], solution[3:])) > WRIST_SWING:
            wrist = list(now[:3]) + list(solution[3:])
            arm = list(solution[:3]) + list(now[3:])
            self.joint_move(wrist if self.hand_pose()[0][2] >= goal[2] else arm)
        self.joint_move(solution)

    def move_joints(self, goal: list[float]) -> bool:
        """To joint angles `goal` along a path that touches nothing new (joint_path); False, without
        moving, where none was found (the goal itself touches something, or the search gave up)."""
        start = np.asarray(self.joint_angles())
        target = np.asarray(goal, dtype=float)
        kin = self.kinematics
        lower = [kin.lower[slot] for slot in kin.arm_slots]
        upper = [kin.upper[slot] for slot in kin.arm_slots]
        path = plan_joint_path(start, target, self.clearance.free_between(start, target), lower, upper)
        if path is None:
            return False
        for q in path[1:]:
            self.joint_move([float(v) for v in q])
        return True

    def rest(self) -> None:
        self._to_pose(READY)

    def tuck(self, angles: dict[str, float]) -> None:
        self._to_pose(angles)

    def _to_pose(self, angles: dict[str, float]) -> None:
        """To a named pose along a free path, or straight in joint space where none was found."""
        goal = [angles[name] for name in ARM_JOINTS]
        if not self.move_joints(goal):
            self.joint_move(goal)

    def open_hand(self) -> None:
        if self.on_open is not None:
            self.on_open()
        self.fingers_closed = False
        self.step(90)

    def close_hand(self) -> float:
        self.fingers_closed = True
        self.step(120)
        if self.on_closed is not None:
            self.on_closed()
        return self.finger_gap()

    def stop(self) -> None:
        self._command(self.joint_angles())
        self.step(10)
