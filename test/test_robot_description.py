"""The mobile manipulator's description (description/conceptagent_mm.urdf.xacro), expanded by xacro
and checked by what reads it elsewhere: a URDF library (yourdfpy) for its structure, masses,
inertias and joint limits; PyBullet for loading it and for an IK test: standing at an approach pose
in front of every piece of furniture that things are put on in the built-in scenes, the hand reaches
down onto its top."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conceptagent_ros.manipulation.robot_spec import load_robot_spec
from conceptagent_ros.scene.house_geometry import facing, layout
from conceptagent_ros.scene.loader import list_scenes, load_scene

ARM = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint")
FRAMES = {"base_footprint", "camera_optical_frame", "grasp_link"}  # frames, no body


def _urdf(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / f"robot_{abs(hash(args))}.urdf"
    done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "robot", "urdf", *args, "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def urdf(tmp_path_factory) -> Path:
    return _urdf(tmp_path_factory.mktemp("robot"), "--no-gazebo")


@pytest.fixture(scope="module")
def model(urdf):  # noqa: ANN201 - a yourdfpy.URDF
    yourdfpy = pytest.importorskip("yourdfpy")
    return yourdfpy.URDF.load(str(urdf), build_scene_graph=True, load_meshes=False)


def test_the_description_has_a_drive_base_sensors_a_six_joint_arm_and_a_gripper(model) -> None:
    joints = {j.name: j for j in model.robot.joints}
    assert joints["left_wheel_joint"].type == joints["right_wheel_joint"].type == "continuous"
    assert [joints[n].type for n in ARM] == ["revolute"] * 6
    assert joints["left_finger_joint"].type == joints["right_finger_joint"].type == "prismatic"
    assert joints["right_finger_joint"].mimic.joint == "left_finger_joint"
    links = {link.name for link in model.robot.links}
    assert {"base_footprint", "base_link", "laser_link", "camera_link", "camera_optical_frame", "mast_link",
            "grasp_link"} <= links
    # the camera stands at the mast's top, above the arm's shoulder, looking forward and down
    camera = model.get_transform("camera_link", "base_footprint")
    shoulder = model.get_transform("upper_arm_link", "base_footprint")
    assert camera[2, 3] > shoulder[2, 3] + 0.3
    assert camera[:3, 0] @ np.array([1.0, 0.0, 0.0]) > 0.7 and camera[2, 0] < -0.3
    laser = model.get_transform("laser_link", "base_footprint")
    assert 0.2 < laser[2, 3] < 0.4  # above the chassis, below any table top


def test_the_torso_lifts_the_arm_and_the_camera_together_by_its_travel(model, tmp_path) -> None:
    """torso_lift_joint raises the mast, and with it the shoulder and the camera, by the same
    height, up to TORSO_TRAVEL; expanded with torso_fixed:=true it is a fixed joint (the arm's
    kinematic copy)."""
    from conceptagent_ros.world.robot_description import TORSO_JOINT, TORSO_TRAVEL

    torso = next(j for j in model.robot.joints if j.name == TORSO_JOINT)
    assert torso.type == "prismatic" and list(torso.axis) == [0, 0, 1]
    assert (torso.limit.lower, torso.limit.upper) == pytest.approx((0.0, TORSO_TRAVEL))
    down = {link: model.get_transform(link, "base_footprint")[2, 3] for link in ("camera_link", "upper_arm_link")}
    model.update_cfg({TORSO_JOINT: TORSO_TRAVEL})
    try:
        up = {link: model.get_transform(link, "base_footprint")[2, 3] for link in down}
    finally:
        model.update_cfg({TORSO_JOINT: 0.0})
    assert all(up[link] - down[link] == pytest.approx(TORSO_TRAVEL) for link in down)
    fixed = _urdf(tmp_path, "--no-gazebo", "--torso-fixed").read_text()
    assert f'<joint name="{TORSO_JOINT}" type="fixed">' in fixed


def test_every_body_has_a_valid_mass_and_inertia_and_every_joint_real_limits(model) -> None:
    for link in model.robot.links:
        if link.name in FRAMES:
            assert link.inertial is None and not link.visuals and not link.collisions
            continue
        assert link.inertial is not None and link.inertial.mass > 0, link.name
        inertia = np.asarray(link.inertial.inertia)
        eig = np.linalg.eigvalsh(inertia)
        assert (eig > 0).all(), link.name  # positive definite
        a, b, c = eig
        assert a + b >= c - 1e-12 and a + c >= b - 1e-12 and b + c >= a - 1e-12, link.name  # triangle inequality
    for joint in model.robot.joints:
        if joint.type in ("revolute", "prismatic"):
            assert joint.limit.lower < joint.limit.upper, joint.name
        if joint.type in ("revolute", "prismatic", "continuous"):
            assert joint.limit.effort > 0 and joint.limit.velocity > 0, joint.name


def test_the_gripper_is_the_one_the_grasp_planner_plans_for(model) -> None:
    gripper = load_robot_spec("conceptagent_mm").gripper
    joints = {j.name: j for j in model.robot.joints}
    assert 2 * joints["left_finger_joint"].limit.upper == pytest.approx(gripper.max_opening)
    finger = next(link for link in model.robot.links if link.name == "left_finger")
    depth, thickness, width = finger.collisions[0].geometry.box.size
    assert (depth, thickness, width) == pytest.approx((gripper.finger_depth, gripper.finger_thickness,
                                                       gripper.finger_width))
    hand = next(link for link in model.robot.links if link.name == "hand_link")
    palm_depth, palm_length, palm_width = hand.collisions[0].geometry.box.size
    assert (palm_depth, palm_length, palm_width) == pytest.approx((gripper.palm_depth, gripper.palm_length,
                                                                   gripper.palm_width))
    # the grasp frame is half a finger deep into the space between the fingers
    grasp = model.get_transform("grasp_link", "hand_link")
    assert grasp[0, 3] == pytest.approx(gripper.palm_depth + gripper.finger_depth / 2)
    base = next(link for link in model.robot.links if link.name == "base_link")
    assert base.collisions[0].geometry.cylinder.radius <= 0.25  # what the map checks inflate by


def test_gazebo_plugins_and_ros2_control_are_there_when_asked(tmp_path) -> None:
    plain = _urdf(tmp_path, "--no-gazebo").read_text()
    assert "gz-sim-diff-drive-system" not in plain and "<ros2_control" not in plain
    full = _urdf(tmp_path, "--controllers", "/opt/controllers.yaml").read_text()
    for needed in ("gz-sim-diff-drive-system", 'type="rgbd_camera"', 'type="gpu_lidar"',
                   "gz_ros2_control/GazeboSimSystem", "<parameters>/opt/controllers.yaml</parameters>"):
        assert needed in full, needed
    for joint in (*ARM, "left_finger_joint"):
        assert f'<joint name="{joint}">' in full.split("<ros2_control")[1], joint


@pytest.fixture(scope="module")
def pybullet_robot(urdf):  # noqa: ANN201 - (pybullet, client, robot id)
    p = pytest.importorskip("pybullet")
    client = p.connect(p.DIRECT)
    robot = p.loadURDF(str(urdf), useFixedBase=True, physicsClientId=client)
    yield p, client, robot
    p.disconnect(client)


def test_pybullet_loads_it_with_every_joint(pybullet_robot, model) -> None:
    p, client, robot = pybullet_robot
    names = {p.getJointInfo(robot, j, physicsClientId=client)[1].decode()
             for j in range(p.getNumJoints(robot, physicsClientId=client))}
    assert names == {j.name for j in model.robot.joints}


def _furniture_tops() -> list[tuple[str, str, np.ndarray, float]]:
    """(scene, id, top's centre, yaw toward the room) of every piece that things are put on."""
    tops = []
    for name in list_scenes("household"):
        scene = load_scene(name)
        boxes = layout(scene)
        for oid, obj in sorted(scene.objects.items()):
            if not obj.has("receptacle") or obj.has("pickupable") or obj.has("openable"):
                continue
            box = boxes[oid]
            room = scene.rooms[obj.room]
            fx, fy = facing(room.centre[0] - box.center[0], room.centre[1] - box.center[1], box.size)
            tops.append((name, oid, np.array([box.center[0], box.center[1], box.center[2] + box.size[2] / 2,
                                              box.size[0] / 2 if fx else box.size[1] / 2]), math.atan2(fy, fx)))
    return tops


def test_the_arm_reaches_onto_every_furniture_top_from_an_approach_pose(pybullet_robot) -> None:
    """The base stands a hand's breadth from the furniture's front, facing it; the hand, pointing
    down, reaches a spot 12 cm in from the front edge, 6 cm above the top (IK on PyBullet's copy,
    judged by forward kinematics: within 1 cm and 10 degrees, joints within their limits)."""
    from scipy.spatial.transform import Rotation

    p, client, robot = pybullet_robot
    count = p.getNumJoints(robot, physicsClientId=client)
    info = [p.getJointInfo(robot, j, physicsClientId=client) for j in range(count)]
    grasp = next(j for j in range(count) if info[j][12].decode() == "grasp_link")
    movable = [j for j in range(count) if info[j][2] != p.JOINT_FIXED]
    lower = [info[j][8] if info[j][9] > info[j][8] else -math.pi for j in movable]
    upper = [info[j][9] if info[j][9] > info[j][8] else math.pi for j in movable]
    radius = 0.22
    missed = []
    tops = _furniture_tops()
    assert len(tops) >= 20
    for scene, oid, top, yaw in tops:
        centre, half = top[:3], top[3]
        front = np.array([math.cos(yaw), math.sin(yaw), 0.0])
        base = centre + front * (half + radius + 0.08)
        base[2] = 0.0
        p.resetBasePositionAndOrientation(robot, base.tolist(), p.getQuaternionFromEuler([0, 0, yaw + math.pi]),
                                          physicsClientId=client)
        target = centre + front * (half - 0.12)
        target[2] += 0.06
        want = Rotation.from_euler("z", yaw + math.pi) * Rotation.from_euler("y", math.pi / 2)  # hand x down
        rng = np.random.default_rng(0)
        reached = False
        for attempt in range(20):
            seed = [0.0] * len(movable) if attempt == 0 else [rng.uniform(a, b) for a, b in zip(lower, upper)]
            for j, q in zip(movable, seed):
                p.resetJointState(robot, j, q, physicsClientId=client)
            for _ in range(3):
                solution = p.calculateInverseKinematics(
                    robot, grasp, target.tolist(), want.as_quat().tolist(), lowerLimits=lower, upperLimits=upper,
                    jointRanges=[b - a for a, b in zip(lower, upper)], restPoses=seed, maxNumIterations=200,
                    residualThreshold=1e-5, physicsClientId=client)
                for j, q in zip(movable, solution):
                    p.resetJointState(robot, j, q, physicsClientId=client)
            state = p.getLinkState(robot, grasp, computeForwardKinematics=True, physicsClientId=client)
            within = all(a - 1e-3 <= q <= b + 1e-3 for q, a, b in zip(solution, lower, upper))
            error = float(np.linalg.norm(np.asarray(state[4]) - target))
            turn = (Rotation.from_quat(state[5]).inv() * want).magnitude()
            if within and error < 0.01 and turn < math.radians(10):
                reached = True
                break
        if not reached:
            missed.append(f"{scene}/{oid} (top at {top[2]:.2f} m)")
    assert not missed, missed
