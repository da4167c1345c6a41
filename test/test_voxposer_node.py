"""The VoxPoser trajectory node under real rclpy: the SynthesizeTrajectory action drives the PyBullet
arm (and, through the pose-topic controller interface, a hand-made arm), publishes its path and
value maps, reports per-waypoint feedback, explains failures, and a cancel stops the arm."""
from __future__ import annotations

import io
import os
import time

import numpy as np
import pytest
from ros_helpers import Spinning, StandInClientCalls, require_ros, wait_future, wait_until

require_ros()
pytest.importorskip("pybullet")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from nav_msgs.msg import Path  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import PointCloud2  # noqa: E402
from std_msgs.msg import Float64  # noqa: E402

from conceptagent_ros.action import SynthesizeTrajectory  # noqa: E402
from conceptagent_ros.msg import SceneGraph, SceneObject  # noqa: E402

Result = SynthesizeTrajectory.Result


@pytest.fixture(autouse=True)
def _no_program_cache(monkeypatch):
    monkeypatch.setenv("CONCEPTAGENT_VOXPOSER_CACHE", "off")


def spin(context, *nodes) -> Spinning:
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    for node in nodes:
        executor.add_node(node)
    return Spinning(executor)


def node_with(context, **params):
    from conceptagent_ros.ros.voxposer_node import VoxPoserNode
    overrides = [Parameter(name, value=value) for name, value in params.items()]
    return VoxPoserNode(context=context, parameter_overrides=overrides)


def send(client: ActionClient, instruction: str, feedback: list | None = None, timeout: float = 240.0):
    assert client.wait_for_server(timeout_sec=10.0)
    handle = wait_future(client.send_goal_async(SynthesizeTrajectory.Goal(instruction=instruction),
                                                feedback_callback=(lambda m: feedback.append(m.feedback))
                                                if feedback is not None else None))
    assert handle.accepted
    return handle, handle.get_result_async()


def test_action_moves_the_simulated_arm_and_publishes_path_and_maps(ros_context):
    node = node_with(ros_context, arm="sim")
    watcher = Node("watcher", context=ros_context)
    paths: list[Path] = []
    clouds: list[PointCloud2] = []
    watcher.create_subscription(Path, "voxposer/planned_path", paths.append, 10)
    watcher.create_subscription(PointCloud2, "voxposer/maps/affordance", clouds.append, 10)
    client = ActionClient(watcher, SynthesizeTrajectory, "voxposer/synthesize_trajectory")
    spinning = spin(ros_context, node, watcher)
    try:
        feedback: list = []
        _, result_future = send(client, "move to the top of the green block", feedback)
        result = wait_future(result_future, 240.0).result
        assert result.success, result.error_msg
        assert result.error_code == Result.NONE and result.replans >= 1 and result.replan_hz > 0
        poses = result.trajectory.poses
        assert len(poses) >= 5 and result.trajectory.header.frame_id == "world"
        assert feedback and feedback[-1].waypoint_index == len(poses)
        end = np.array([poses[-1].pose.position.x, poses[-1].pose.position.y, poses[-1].pose.position.z])
        assert 0.0 < end[2] < 0.2  # above the table, where the block's top is
        assert any("get_affordance_map" in p for p in result.programs)
        wait_until(lambda: bool(paths) and bool(clouds), 10.0, "path and affordance map published")
        from conceptagent_ros.ros.conversions.voxposer import cloud_points
        points = cloud_points(clouds[-1])
        assert len(points) > 0 and np.all(points[:, 3] > 0)  # target voxels only, value 1
        assert np.linalg.norm(points[:, :2].mean(axis=0) - end[:2]) < 0.05  # the map's target is where the arm went
    finally:
        spinning.stop()
        node.destroy_node()
        watcher.destroy_node()


def test_refused_instruction_and_unknown_colour_leave_the_arm_still(ros_context):
    node = node_with(ros_context, arm="sim")
    client_node = Node("client", context=ros_context)
    client = ActionClient(client_node, SynthesizeTrajectory, "voxposer/synthesize_trajectory")
    spinning = spin(ros_context, node, client_node)
    try:
        for text, code in (("sing a song about the table", Result.INVALID_INSTRUCTION),
                           ("move to the top of the magenta block", Result.INVALID_INSTRUCTION),
                           ("   ", Result.INVALID_INSTRUCTION)):
            _, future = send(client, text)
            result = wait_future(future, 60.0).result
            assert not result.success and result.error_code == code, (text, result.error_msg)
            assert result.error_msg and len(result.trajectory.poses) == 0
    finally:
        spinning.stop()
        node.destroy_node()
        client_node.destroy_node()


class HandMadeArm:
    """A Cartesian arm on topics: follows ee_target set-points at most 0.5 m/s, publishes ee_pose at 100 Hz."""

    def __init__(self, context, start=(0.45, 0.0, 0.3)):
        self.node = Node("hand_made_arm", context=context)
        self.position = np.array(start, dtype=float)
        self.target = self.position.copy()
        self.targets: list[np.ndarray] = []
        self.target_stamps: list[int] = []  # when each set-point was published (ns, the sender's clock)
        self.gripper: list[float] = []
        self.pose_pub = self.node.create_publisher(PoseStamped, "ee_pose", 1)
        self.node.create_subscription(PoseStamped, "ee_target", self._on_target, 10)
        self.node.create_subscription(Float64, "gripper_command", lambda m: self.gripper.append(m.data), 10)
        self.node.create_timer(0.01, self._tick)
        graph_pub = self.node.create_publisher(SceneGraph, "scene_graph", 1)
        block = SceneObject(id="block_1", label="blue block")
        block.pose.position.x, block.pose.position.y, block.pose.position.z = 0.6, 0.15, 0.02
        block.pose.orientation.w = 1.0
        block.size.x = block.size.y = block.size.z = 0.04
        graph = SceneGraph(objects=[block])
        graph.header.frame_id = "world"
        self.node.create_timer(0.1, lambda: graph_pub.publish(graph))

    def _on_target(self, msg: PoseStamped) -> None:
        p = msg.pose.position
        self.target = np.array([p.x, p.y, p.z])
        self.targets.append(self.target)
        self.target_stamps.append(msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec)

    def _tick(self) -> None:
        step = self.target - self.position
        distance = np.linalg.norm(step)
        self.position = self.position + (step if distance <= 0.005 else step / distance * 0.005)
        msg = PoseStamped()
        msg.header.frame_id = "world"
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in self.position)
        msg.pose.orientation.x = 1.0
        self.pose_pub.publish(msg)


def test_pose_topic_controller_drives_an_arm_from_the_scene_graph(ros_context):
    arm = HandMadeArm(ros_context)
    node = node_with(ros_context, arm="pose_topic", control_rate=100.0, base_speed=0.5)
    client_node = Node("client", context=ros_context)
    client = ActionClient(client_node, SynthesizeTrajectory, "voxposer/synthesize_trajectory")
    spinning = spin(ros_context, node, client_node, arm.node)
    try:
        _, future = send(client, "move to the top of the blue block")
        result = wait_future(future, 120.0).result
        assert result.success, result.error_msg
        assert len(arm.targets) > 10  # streamed set-points, not one jump
        steps = np.linalg.norm(np.diff(np.array(arm.targets), axis=0), axis=1)
        assert steps.max() < 0.02  # at 0.5 m/s and 100 Hz each set-point is <= 5 mm from the last (+ waypoint rounding)
        # the arm's own controller may still be closing the last few millimetres when the result comes
        wait_until(lambda: np.linalg.norm(arm.target - arm.position) < 1e-3, 5.0, "the arm reaching its last set-point")
        # 10 cm above the 4 cm block's top: z 0.14, where the executor stops within reach_voxels of the
        # target voxel (a voxel's rounding on top); under load the last replan may stop at that edge
        from conceptagent_ros.voxposer.executor import VoxPoserOptions

        z_slack = (VoxPoserOptions().reach_voxels + 1) * float(node.grid.resolution[2])
        assert np.linalg.norm(arm.position[:2] - np.array([0.6, 0.15])) < 0.03 and 0.03 < arm.position[2] < 0.14 + z_slack
    finally:
        spinning.stop()
        for n in (node, client_node, arm.node):
            n.destroy_node()


def test_pose_topic_controller_without_a_scene_graph_is_a_clear_error(ros_context):
    node = node_with(ros_context, arm="pose_topic")
    node.arm.config = type(node.arm.config)(**{**node.arm.config.__dict__, "wait_s": 0.5})
    client_node = Node("client", context=ros_context)
    client = ActionClient(client_node, SynthesizeTrajectory, "voxposer/synthesize_trajectory")
    spinning = spin(ros_context, node, client_node)
    try:
        _, future = send(client, "move to the top of the blue block")
        result = wait_future(future, 30.0).result
        assert not result.success and result.error_code == Result.CONTROLLER_FAILED
        assert "scene graph" in result.error_msg
    finally:
        spinning.stop()
        node.destroy_node()
        client_node.destroy_node()


def test_cancel_stops_the_arm(ros_context):
    arm = HandMadeArm(ros_context, start=(0.3, -0.3, 0.3))
    node = node_with(ros_context, arm="pose_topic", control_rate=100.0, base_speed=0.1)
    client_node = Node("client", context=ros_context)
    client = ActionClient(client_node, SynthesizeTrajectory, "voxposer/synthesize_trajectory")
    spinning = spin(ros_context, node, client_node, arm.node)
    try:
        feedback: list = []
        handle, future = send(client, "move to the top of the blue block", feedback)
        wait_until(lambda: len(feedback) >= 3, 60.0, "three waypoints executed")
        wait_future(handle.cancel_goal_async(), 10.0)
        result = wait_future(future, 30.0).result
        finished_ns = client_node.get_clock().now().nanoseconds
        assert not result.success and result.error_code == Result.CANCELED
        held = arm.position.copy()
        time.sleep(1.0)
        # Nothing is commanded after the cancel: judged by when each set-point was sent, since ones sent
        # just before it can still be in flight when the result arrives on its own topic.
        assert arm.target_stamps and max(arm.target_stamps) <= finished_ns
        assert np.linalg.norm(arm.position - held) < 0.01
        assert np.linalg.norm(arm.position[:2] - np.array([0.6, 0.15])) > 0.1  # it stopped on the way
    finally:
        spinning.stop()
        for n in (node, client_node, arm.node):
            n.destroy_node()


def test_value_map_cloud_is_built_without_per_point_loops_and_thinned():
    from builtin_interfaces.msg import Time

    from conceptagent_ros.ros.conversions.voxposer import cloud_points, value_map_cloud
    from conceptagent_ros.voxposer.api import VoxelGrid
    grid = VoxelGrid((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), 100)
    values = np.zeros((100, 100, 100))
    values[:, :50, :] = 1.0  # a dense half-space map: 500,000 voxels
    values[10, 20, 30] = 0.5
    msg = value_map_cloud("avoidance", values, grid, "world", Time(), max_points=10_000)
    points = cloud_points(msg)
    assert 5_000 <= len(points) <= 10_000 and msg.width == len(points)
    assert np.all(points[:, 1] < 0.5) and set(np.round(points[:, 3], 2)) <= {1.0, 0.5}
    sparse = cloud_points(value_map_cloud("affordance", (values == 0.5).astype(float), grid, "world", Time()))
    assert np.allclose(sparse, [[0.105, 0.205, 0.305, 1.0]], atol=1e-6)
    with pytest.raises(ValueError):
        value_map_cloud("rotation", np.zeros((100, 100, 100, 4)), grid, "world", Time())


class StandInFollowJointTrajectory:
    """Same fields as control_msgs/action/FollowJointTrajectory's goal (not pip-installable here)."""

    class Goal:
        def __init__(self):
            from trajectory_msgs.msg import JointTrajectory
            self.trajectory = JointTrajectory()

    class Result:
        SUCCESSFUL = 0

        def __init__(self, error_code=0):
            self.error_code = error_code


class StandInTrajectoryServer(StandInClientCalls):
    """An ActionClient stand-in: runs each goal at once by reporting its final joints as the arm's state."""

    def __init__(self):
        self.goals = []
        self.arm = None

    def wait_for_server(self, timeout_sec=None):
        return True

    def send_goal_async(self, goal):
        from types import SimpleNamespace

        from rclpy.task import Future
        self.goals.append(goal)
        point = goal.trajectory.points[-1]
        self.arm.on_joint_state(list(goal.trajectory.joint_names), list(point.positions))
        result = Future()
        result.set_result(SimpleNamespace(result=StandInFollowJointTrajectory.Result(0)))
        handle = SimpleNamespace(accepted=True, get_result_async=lambda: result, cancel_goal_async=lambda: None)
        sent = Future()
        sent.set_result(handle)
        return sent


def test_joint_trajectory_controller_sends_joints_that_reach_the_waypoint(ros_context):
    from conceptagent_ros.ros.adapters.arm_controllers import ArmLinkConfig, JointTrajectoryArm
    from conceptagent_ros.voxposer.api import VoxelGrid
    from conceptagent_ros.voxposer.kinematics import PybulletKinematics
    from conceptagent_ros.voxposer.tabletop import REST_POSE, TABLE_LOWER, TABLE_UPPER, WORKSPACE_LOWER, WORKSPACE_UPPER
    node = Node("fjt_arm", context=ros_context)
    kinematics = PybulletKinematics()
    server = StandInTrajectoryServer()
    config = ArmLinkConfig(VoxelGrid(WORKSPACE_LOWER, WORKSPACE_UPPER, 100), TABLE_LOWER, TABLE_UPPER, base_speed=0.2)
    arm = JointTrajectoryArm(node, config, None, "arm/follow_joint_trajectory", kinematics,
                             action_type=StandInFollowJointTrajectory, client=server)
    server.arm = arm
    try:
        # a JointState lists more joints than the arm's, in another order
        names = ["panda_finger_joint1", *reversed(kinematics.config.joint_names)]
        arm.on_joint_state(names, [0.04, *reversed(REST_POSE)])
        start, _ = arm.ee_pose()
        target = np.array([0.5, 0.1, 0.15])
        assert arm.move_to(target, None, speed=0.5)
        trajectory = server.goals[-1].trajectory
        assert list(trajectory.joint_names) == [f"panda_joint{i}" for i in range(1, 8)]
        reached, quaternion = kinematics.forward(trajectory.points[-1].positions)
        assert np.linalg.norm(reached - target) < 0.005
        assert abs(abs(quaternion[0]) - 1.0) < 0.01  # tool pointing down
        t = trajectory.points[-1].time_from_start
        assert abs(t.sec + t.nanosec * 1e-9 - np.linalg.norm(target - start) / (0.2 * 0.5)) < 0.01
        assert np.linalg.norm(arm.ee_pose()[0] - target) < 0.005  # read back through forward kinematics
    finally:
        kinematics.close()
        node.destroy_node()


class MovingTf:
    """tf2_ros.Buffer's lookup_transform as a stand-in: the root link's pose in map is wherever the
    test last drove the base (x, y, yaw)."""

    def __init__(self):
        self.x, self.y, self.yaw, self.lookups = 0.0, 0.0, 0.0, []

    def lookup_transform(self, target, source, time):
        from types import SimpleNamespace

        self.lookups.append((target, source))
        translation = SimpleNamespace(x=self.x, y=self.y, z=0.0)
        rotation = SimpleNamespace(x=0.0, y=0.0, z=np.sin(self.yaw / 2), w=np.cos(self.yaw / 2))
        return SimpleNamespace(transform=SimpleNamespace(translation=translation, rotation=rotation))


def test_an_arm_on_a_moving_base_plans_in_map_through_tf(ros_context):
    """The arm's root is looked up on TF at every target and pose: the same map target gives other
    joints once the base has moved, each reaching it from where the base then stands."""
    from scipy.spatial.transform import Rotation

    from conceptagent_ros.ros.adapters.arm_controllers import ArmLinkConfig, JointTrajectoryArm
    from conceptagent_ros.ros.adapters.base_pose import TfBasePose
    from conceptagent_ros.voxposer.api import VoxelGrid
    from conceptagent_ros.voxposer.kinematics import PybulletKinematics
    from conceptagent_ros.voxposer.tabletop import REST_POSE, TABLE_LOWER, TABLE_UPPER, WORKSPACE_LOWER, WORKSPACE_UPPER
    node = Node("fjt_mobile_arm", context=ros_context)
    kinematics = PybulletKinematics()
    server, tf = StandInTrajectoryServer(), MovingTf()
    config = ArmLinkConfig(VoxelGrid(WORKSPACE_LOWER, WORKSPACE_UPPER, 100), TABLE_LOWER, TABLE_UPPER, "map",
                           base_speed=0.2)
    arm = JointTrajectoryArm(node, config, None, "arm/follow_joint_trajectory", kinematics,
                             action_type=StandInFollowJointTrajectory, client=server,
                             base=TfBasePose(node, "map", "panda_link0", buffer=tf))
    server.arm = arm
    try:
        tf.x, tf.y, tf.yaw = 2.0, 1.0, np.pi / 2  # the base stands at (2, 1) facing +y
        arm.on_joint_state(list(kinematics.config.joint_names), list(REST_POSE))
        rest_root, _ = kinematics.forward(REST_POSE)
        ee, _ = arm.ee_pose()
        assert np.allclose(ee, [2.0 - rest_root[1], 1.0 + rest_root[0], rest_root[2]], atol=1e-6)  # in map
        target = np.array([1.9, 1.5, 0.15])  # 0.5 m ahead of the base in map
        assert arm.move_to(target, None, speed=0.5)
        first = list(server.goals[-1].trajectory.points[-1].positions)
        reached, quaternion = kinematics.forward(first)  # in the root's frame: 0.5 m ahead, 0.1 m right
        assert np.linalg.norm(reached - [0.5, 0.1, 0.15]) < 0.005
        assert np.linalg.norm(arm.ee_pose()[0] - target) < 0.005
        assert Rotation.from_quat(quaternion).apply([0, 0, 1])[2] < -0.99  # the tool still points down
        tf.x, tf.y, tf.yaw = 1.9, 1.0, np.pi / 2  # the base drove 10 cm toward -x
        assert arm.move_to(target, None, speed=0.5)
        reached, _ = kinematics.forward(list(server.goals[-1].trajectory.points[-1].positions))
        assert np.linalg.norm(reached - [0.5, 0.0, 0.15]) < 0.005  # the same map point, now straight ahead
        assert ("map", "panda_link0") in tf.lookups
    finally:
        kinematics.close()
        node.destroy_node()


def test_joint_trajectory_controller_without_control_msgs_says_what_to_install(ros_context):
    import importlib.util

    from conceptagent_ros.ros.adapters.arm_controllers import ArmLinkConfig, JointTrajectoryArm
    from conceptagent_ros.voxposer.api import VoxelGrid
    from conceptagent_ros.voxposer.executor import VoxPoserError
    if importlib.util.find_spec("control_msgs") is not None:
        pytest.skip("control_msgs is installed here")
    node = Node("fjt_arm", context=ros_context)
    try:
        with pytest.raises(VoxPoserError, match="control_msgs"):
            JointTrajectoryArm(node, ArmLinkConfig(VoxelGrid((0, 0, 0), (1, 1, 1)), (0, 0, 0), (1, 1, 0)), None,
                               "arm/follow_joint_trajectory", kinematics=None)
    finally:
        node.destroy_node()


def test_params_file_names_only_parameters_the_node_declares(ros_context):
    from pathlib import Path

    import yaml
    params = yaml.safe_load((Path(__file__).parent.parent / "config" / "ros" / "voxposer.yaml").read_text())
    values = params["/conceptagent/voxposer"]["ros__parameters"]
    node = node_with(ros_context, **{**values, "arm": "pose_topic"})
    try:
        for name, value in values.items():
            if name != "arm":
                assert node.has_parameter(name), name
                assert node.get_parameter(name).value == value, name
    finally:
        node.destroy_node()


def test_the_simulated_arm_judges_its_templates_instruction_from_ground_truth(ros_context):
    """sim.template + sim.seed set through the parameter service (as `ros voxposer-bench` does): the
    template's own instruction comes back judged; any other instruction is not judged."""
    from conceptagent_ros.ros.bench.voxposer_node_bench import NodeBench, run_bench
    from conceptagent_ros.voxposer.task_templates import make_task

    node = node_with(ros_context, arm="sim")
    client_node = Node("bench_client", context=ros_context)
    spinning = spin(ros_context, node, client_node)
    bench = NodeBench(client_node, server_wait=10.0)
    try:
        results, rows = run_bench(bench, [8], 1, True, 240.0, out=io.StringIO())  # "move to the [region]"
        assert results == {8: (1, 1)}, rows
        assert rows[0]["instruction"] == make_task(8, 0).instruction and "end effector at" in str(rows[0]["verdict"])
        assert node.get_parameter("sim.template").value == 9 and node.get_parameter("sim.seed").value == 0
        other = bench.episode(9, 0, "move to the front left corner of the table", 240.0)
        assert other.success and other.judge == Result.JUDGE_NONE and other.judge_verdict == ""
    finally:
        bench.close()
        spinning.stop()
        node.destroy_node()
        client_node.destroy_node()


def test_voxposer_bench_command_drives_a_node_in_another_process(tmp_path):
    import subprocess
    import sys

    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as reserved:
        env = dict(os.environ, ROS_DOMAIN_ID=str(reserved), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
                   CONCEPTAGENT_VOXPOSER_CACHE="off")
        run = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "ros", "voxposer-bench", "--template", "1",
                              "--seeds", "2", "--out", str(tmp_path)], env=env, capture_output=True, text=True,
                             timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "Through the node's action: success" in run.stdout
    report = (tmp_path / "voxposer_node.md").read_text()
    assert "through the trajectory node's SynthesizeTrajectory action" in report and "| 1 |" in report
    rows = (tmp_path / "voxposer_node_episodes.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("template,seed,instruction,success")
