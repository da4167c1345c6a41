"""The manipulation node on real rclpy: the PyBullet Panda as the whole robot of the graph (a task
through ExecuteTask, judged on the physics), ExecuteSkill feedback per phase, cancel stopping the
arm, a second skill refused while one runs, grasp markers for rviz, robot_skills_node forwarding
pick to it by default, and `conceptagent ros demo --body pybullet` across processes (what `make
manipulation-demo` runs)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from ros_helpers import Spinning, require_ros, wait_future, wait_until

require_ros()
pytest.importorskip("pybullet")

from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from conceptagent_ros.action import ExecuteSkill, ExecuteTask  # noqa: E402
from conceptagent_ros.msg import SkillCall  # noqa: E402

ARM_AS_ROBOT = {"scene": "tabletop", "action_prefix": "skills", "publish_scene_graph": True, "frame_id": "map",
                "skills": ["navigate_to", "pick", "place", "open", "close"]}


@pytest.fixture
def client(ros_context):
    node = Node("test_manipulation_client", context=ros_context)
    executor = MultiThreadedExecutor(num_threads=2, context=ros_context)
    executor.add_node(node)
    spinning = Spinning(executor)
    try:
        yield node
    finally:
        spinning.stop()
        node.destroy_node()


def skill_goal(skill: str, *args: str) -> ExecuteSkill.Goal:
    return ExecuteSkill.Goal(call=SkillCall(skill=skill, args=list(args)))


def test_a_task_through_the_graph_moves_the_duck_into_the_tray_on_the_physics(ros_context, client) -> None:
    """The graph as launch/manipulation.launch.py brings it up, with its shipped params file."""
    import yaml

    from conceptagent_ros.bodies.tabletop.tabletop_judge import physical_state
    from conceptagent_ros.paths import config_dir
    from conceptagent_ros.ros.bringup import GraphOptions, bring_up

    params = yaml.safe_load((config_dir() / "ros" / "manipulation_pybullet.yaml").read_text())
    arm, planner = (params[f"/conceptagent/{n}"]["ros__parameters"] for n in ("manipulation", "planner"))
    graph = bring_up(GraphOptions(with_robot=False, manipulation=arm, planner=planner), context=ros_context)
    try:
        for name, values in (("manipulation", arm), ("planner", planner)):  # no key of the file is a typo
            assert all(graph.nodes[name].has_parameter(k) for k in values), (name, values)
        tasks = ActionClient(client, ExecuteTask, "/conceptagent/execute_task")
        assert tasks.wait_for_server(timeout_sec=30.0)
        handle = wait_future(tasks.send_goal_async(ExecuteTask.Goal(instruction="put the duck in the tray")), 30.0)
        assert handle.accepted
        result = wait_future(handle.get_result_async(), 180.0).result
        assert result.success, result.error_msg
        body = graph.nodes["manipulation"].body
        truth = physical_state(body.world, body.layout, body.scene)
        assert ("in", "duck_1", "tray_1") in truth.atoms, "the planner said done but the physics disagrees"
    finally:
        graph.shutdown()


def test_skill_feedback_cancel_busy_and_grasp_markers(ros_context, client) -> None:
    from visualization_msgs.msg import MarkerArray

    from conceptagent_ros.ros.bringup import GraphOptions, bring_up

    graph = bring_up(GraphOptions(with_robot=False, with_planner=False, manipulation=ARM_AS_ROBOT), context=ros_context)
    markers: list[MarkerArray] = []
    client.create_subscription(MarkerArray, "/conceptagent/grasp_markers", markers.append, 10)
    try:
        pick = ActionClient(client, ExecuteSkill, "/conceptagent/skills/pick")
        place = ActionClient(client, ExecuteSkill, "/conceptagent/skills/place")
        assert pick.wait_for_server(timeout_sec=30.0) and place.wait_for_server(timeout_sec=30.0)
        # feedback per phase, and the markers of the plan
        statuses: list[str] = []
        handle = wait_future(pick.send_goal_async(skill_goal("pick", "duck_1"),
                                                  feedback_callback=lambda m: statuses.append(m.feedback.status)), 30.0)
        busy = wait_future(place.send_goal_async(skill_goal("place", "duck_1", "tray_1")), 30.0)
        busy_result = wait_future(busy.get_result_async(), 60.0).result
        result = wait_future(handle.get_result_async(), 120.0).result
        assert result.success, result.error_msg
        assert not busy_result.success and "busy" in busy_result.error_msg
        assert busy_result.error_code == ExecuteSkill.Result.SERVER_UNAVAILABLE
        assert any("planning a grasp of duck_1" in s for s in statuses), statuses
        assert any("picking duck_1" in s for s in statuses) and any("moving the hand" in s for s in statuses)
        wait_until(lambda: bool(markers), 10.0, "grasp markers")
        namespaces = {m.ns for m in markers[-1].markers}
        assert {"grasp_candidates", "grasp_chosen", "grasp_fingers"} <= namespaces
        # cancel: the arm stops before its next motion, the goal ends CANCELED
        body = graph.nodes["manipulation"].body
        moving: list[str] = []
        handle = wait_future(place.send_goal_async(
            skill_goal("place", "duck_1", "tray_1"),
            feedback_callback=lambda m: moving.append(m.feedback.status)), 30.0)
        wait_until(lambda: any("moving the hand" in s for s in moving), 60.0, "the place to start moving")
        wait_future(handle.cancel_goal_async(), 10.0)
        result = wait_future(handle.get_result_async(), 60.0).result
        assert not result.success and result.error_code == ExecuteSkill.Result.CANCELED, result.error_msg
        assert "the arm stopped" in result.error_msg
        table = body.world.table
        still = table.ee_position()
        table.step(120)  # half a second more of physics: it holds where it stopped
        assert np.linalg.norm(table.ee_position() - still) < 0.01
    finally:
        graph.shutdown()


def test_robot_skills_forwards_pick_to_the_manipulation_node_by_default(ros_context, client) -> None:
    from conceptagent_ros.ros.bringup import NAMESPACE, GraphOptions, bring_up, overrides
    from conceptagent_ros.ros.robot_skills_node import RobotSkillsNode
    from conceptagent_ros.ros.spin import make_executor

    # the manipulation node with its defaults: manipulation/<skill> for pick, place, open, close
    graph = bring_up(GraphOptions(with_robot=False, with_planner=False, manipulation={"scene": "tabletop"}),
                     context=ros_context)
    skills = RobotSkillsNode(namespace=NAMESPACE, context=ros_context,
                             parameter_overrides=overrides({"navigation.enabled": False, "outcomes_service": ""}))
    executor = make_executor(4, ros_context)
    executor.add_node(skills)
    spinning = Spinning(executor)
    try:
        pick = ActionClient(client, ExecuteSkill, "/conceptagent/skills/pick")
        assert pick.wait_for_server(timeout_sec=30.0)
        handle = wait_future(pick.send_goal_async(skill_goal("pick", "lego_1")), 30.0)
        result = wait_future(handle.get_result_async(), 120.0).result
        assert result.success, result.error_msg
        assert graph.nodes["manipulation"].body.held is not None
        assert graph.nodes["manipulation"].body.held.object_id == "lego_1"
    finally:
        spinning.stop()
        skills.destroy_node()
        graph.shutdown()


def test_the_manipulation_demo_succeeds_across_processes() -> None:
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as reserved:
        env = dict(os.environ, ROS_DOMAIN_ID=str(reserved), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "ros", "demo", "put the duck in the tray",
                               "--scene", "tabletop", "--body", "pybullet", "--timeout", "180"],
                              env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "SUCCESS" in done.stdout and "place(duck_1, tray_1)" in done.stdout


def test_the_household_body_demo_brings_up_perception_and_succeeds_across_processes() -> None:
    """`ros demo --body pybullet` in a household (what make body-demo runs): `ros up` in a child
    process with the body, the perception and scene graph nodes and the planner; the task sent from
    this one succeeds."""
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as reserved:
        env = dict(os.environ, ROS_DOMAIN_ID=str(reserved), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "ros", "demo",
                               "put the apple on the dining table", "--scene", "studio_kitchen", "--body", "pybullet",
                               "--timeout", "240"], env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "SUCCESS" in done.stdout and "place(apple_1, dining_table_1)" in done.stdout
    [up] = [line for line in done.stdout.splitlines() if line.startswith("ROS graph up")]  # what `ros up` brought up
    assert all(node in up for node in ("planner", "perception", "conceptagent_mm in PyBullet", "scene graph")), up


def test_a_household_task_through_the_graph_on_the_body_is_judged_on_the_physics() -> None:
    """`ros suite --body pybullet` (as `ros up --body pybullet` brings the graph up): conceptagent_mm in
    the exported world serves every skill of the library (navigate_to drives its base) and sends its
    mast camera's images to the perception node, whose objects the scene graph node makes the
    planner's graph; the task sent through ExecuteTask by a client node moves the apple onto the
    dining table in PyBullet, judged there (bodies/household/judge.py), not on the planner's word."""
    import argparse
    import io

    from conceptagent_ros.bodies.household.body import HouseholdBody
    from conceptagent_ros.cli.ros import _graph_options
    from conceptagent_ros.evaluation.tasks import Task
    from conceptagent_ros.ros.bench.body_suite import run_body_suite
    from conceptagent_ros.ros.bench.graph_suite import GraphSuiteConfig

    options = _graph_options(argparse.Namespace(namespace="conceptagent", params=None, planner="react", llm="offline",
                                                scene="studio_kitchen", body="pybullet", nodes="robot,planner"))
    assert set(options.manipulation["skills"]) == set(HouseholdBody.SKILLS) and "toggle_on" in HouseholdBody.SKILLS
    assert not options.with_robot  # the body is the whole robot
    # the planner's graph is the scene graph node's, from what the perception node fused
    assert options.perception_node() is not None and options.scene_graph_node() is not None
    assert not options.manipulation["publish_scene_graph"]
    task = Task("apple_on_table", "studio_kitchen", "put the apple on the dining table", "(in apple_1 dining_table_1)")
    progress = io.StringIO()
    [episode] = run_body_suite([task], GraphSuiteConfig(timeout=240.0), stream=progress)
    assert episode.success and episode.believed_success, (episode, progress.getvalue())
    assert episode.steps >= 4 and not episode.unmet and "1/1 so far" in progress.getvalue()
    assert episode.frames >= 12, episode  # at least the look around on arriving, each image fused


def test_the_household_body_gives_rviz_its_model_joint_states_pose_and_path(ros_context, client) -> None:
    """With conceptagent_mm as the whole robot, the manipulation node publishes what rviz draws it
    from: the description (latched), the joint states (the torso and the arm among them, as PyBullet
    has them), the base's pose, and the path its base planned for navigate_to, ending where the base
    stands."""
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Path
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from conceptagent_ros.ros.bringup import GraphOptions, body_options, bring_up
    from conceptagent_ros.world.robot_description import ARM_JOINTS, TORSO_JOINT

    graph = bring_up(GraphOptions(with_robot=False, with_planner=False, manipulation=body_options("studio_kitchen", "body")),
                     context=ros_context)
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    got: dict[str, list] = {"description": [], "joints": [], "pose": [], "path": []}
    client.create_subscription(String, "/conceptagent/robot_description", got["description"].append, latched)
    client.create_subscription(JointState, "/conceptagent/joint_states", got["joints"].append, 10)
    client.create_subscription(PoseStamped, "/conceptagent/robot_pose", got["pose"].append, 10)
    client.create_subscription(Path, "/conceptagent/path", got["path"].append, latched)
    try:
        wait_until(lambda: bool(got["description"]) and bool(got["joints"]), 30.0, "the description and joint states")
        assert 'robot name="conceptagent_mm"' in got["description"][-1].data
        names = list(got["joints"][-1].name)
        assert TORSO_JOINT in names and set(ARM_JOINTS) <= set(names)
        body = graph.nodes["manipulation"].body
        physical = dict(zip(*body.joint_state()[:2]))
        for name, position in zip(names, got["joints"][-1].position):
            assert position == pytest.approx(physical[name], abs=0.02), name
        drive = ActionClient(client, ExecuteSkill, "/conceptagent/skills/navigate_to")
        assert drive.wait_for_server(timeout_sec=30.0)
        handle = wait_future(drive.send_goal_async(skill_goal("navigate_to", "apple_1")), 30.0)
        result = wait_future(handle.get_result_async(), 120.0).result
        assert result.success, result.error_msg
        wait_until(lambda: bool(got["path"]) and len(got["path"][-1].poses) >= 2, 10.0, "the base's path")
        end = got["path"][-1].poses[-1].pose.position
        wait_until(lambda: bool(got["pose"]), 10.0, "the base's pose")
        here = got["pose"][-1].pose.position
        assert np.hypot(end.x - here.x, end.y - here.y) < 0.3
        # the pose the robot publishes is where it believes it stands (localization's estimate, the
        # default senses being a robot's), not the simulator's truth
        assert np.hypot(here.x - body.base.believed.x, here.y - body.base.believed.y) < 0.01
    finally:
        graph.shutdown()


def test_the_base_transform_goes_out_as_tf2_ros_sends_it_and_is_skipped_without_it() -> None:
    """map -> base_footprint through a broadcaster with tf2_ros's sendTransform (a stand-in here:
    tf2_ros does not install from pip), and nothing, without an error, where tf2_ros is missing."""
    import math

    from builtin_interfaces.msg import Time

    from conceptagent_ros.ros.adapters.base_transform import BaseTransform
    from conceptagent_ros.ros.conversions.body import base_pose_msg

    class Broadcaster:
        def __init__(self) -> None:
            self.sent: list = []

        def sendTransform(self, transform) -> None:  # noqa: N802 - tf2_ros's name
            self.sent.append(transform)

    stand_in = Broadcaster()
    tf = BaseTransform(None, "base_footprint", broadcaster=stand_in)
    tf.send(base_pose_msg(1.5, -2.0, math.pi / 2, "map", Time(sec=3)))
    [t] = stand_in.sent
    assert (t.header.frame_id, t.child_frame_id, t.header.stamp.sec) == ("map", "base_footprint", 3)
    assert (t.transform.translation.x, t.transform.translation.y) == (1.5, -2.0)
    assert 2 * math.atan2(t.transform.rotation.z, t.transform.rotation.w) == pytest.approx(math.pi / 2)
    try:
        import tf2_ros  # noqa: F401
    except ImportError:
        bare = BaseTransform(None, "base_footprint")
        assert not bare.available
        bare.send(base_pose_msg(0.0, 0.0, 0.0, "map", Time()))  # no broadcaster: nothing happens


def test_the_household_params_file_brings_up_the_body_seeing_through_perception(ros_context) -> None:
    """config/ros/household_pybullet.yaml (manipulation.launch.py's in a household scene): every key is a parameter its
    node declares, and the graph it makes sees through the perception node -- the body's first look
    around is fused there, and the scene graph node's graph has the counter's apple where PyBullet
    has it, measured near to the nearest point of what the base stands by."""
    import yaml
    from ros_helpers import wait_until

    from conceptagent_ros.bodies.household.body import HouseholdBody
    from conceptagent_ros.paths import config_dir
    from conceptagent_ros.ros.bringup import GraphOptions, bring_up

    params = yaml.safe_load((config_dir() / "ros" / "household_pybullet.yaml").read_text())
    body, perception, scene_graph, planner = (params[f"/conceptagent/{n}"]["ros__parameters"]
                                              for n in ("manipulation", "perception", "scene_graph", "planner"))
    assert tuple(body["skills"]) == HouseholdBody.SKILLS
    perception = dict(perception, config=str(config_dir() / "perception_simulated.yaml"))  # as the launch passes it
    scene_graph = dict(scene_graph, map=body["scene"])
    graph = bring_up(GraphOptions(with_robot=False, manipulation=body, perception=perception, scene_graph=scene_graph,
                                  planner=planner), context=ros_context)
    try:
        for name, values in (("manipulation", body), ("perception", perception), ("scene_graph", scene_graph),
                             ("planner", planner)):  # no key of the file is a typo
            assert all(graph.nodes[name].has_parameter(k) for k in values), (name, values)
        node = graph.nodes["manipulation"]
        wait_until(lambda: node.looked, 120.0, "the first look around through perception")
        assert node.camera.frames >= 12 and node.camera.unfused == 0
        built = graph.nodes["scene_graph"]
        wait_until(lambda: built.perceived is not None and any(o.id == "apple_1" for o in built.perceived.objects), 10.0,
                   "the apple in the perceived graph")
        seen = next(o for o in built.perceived.objects if o.id == "apple_1")
        truth = node.body.positions()["apple_1"].center
        assert abs(seen.pose.position.x - truth[0]) < 0.05 and abs(seen.pose.position.y - truth[1]) < 0.05
        # the planner's graph measures reach to the point of the apple's box nearest the base
        apple = next(o for o in built.graph_msg().objects if o.id == "apple_1")
        assert abs(apple.pose.position.x - seen.pose.position.x) <= seen.size.x / 2 + 1e-6
        assert abs(apple.pose.position.y - seen.pose.position.y) <= seen.size.y / 2 + 1e-6
    finally:
        graph.shutdown()
