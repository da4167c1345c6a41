"""RosRobot, the planner's link to the robot, against hand-made robot servers under real rclpy:
after a skill, an observation is never older than the skill's end."""
from __future__ import annotations

import time

import pytest
from ros_helpers import Spinning, require_ros

require_ros()

from rclpy.action import ActionServer  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from conceptagent_ros.action import ExecuteSkill  # noqa: E402
from conceptagent_ros.msg import SceneGraph, SceneObject  # noqa: E402
from conceptagent_ros.ros.robot_client import RobotLinkConfig, RobotLinkError, RosRobot, SkillEndpoint  # noqa: E402
from conceptagent_ros.skills.contract import SkillCall  # noqa: E402


def fridge_graph(node: Node, is_open: bool) -> SceneGraph:
    graph = SceneGraph()
    graph.header.frame_id = "map"
    fridge = SceneObject(id="fridge_1", label="fridge", affordances=["openable", "receptacle"],
                         state=["open"] if is_open else [])
    fridge.pose.orientation.w = 1.0
    graph.objects = [fridge]
    graph.robot.room, graph.robot.reach = "kitchen_1", 1.0
    return graph


LAG_NS = 300_000_000  # perception delivers each frame 0.3 s after the camera took it


@pytest.fixture
def lagging_robot(ros_context):
    """Perception that lags: every graph shows the world as it was 0.3 s before it is published, and
    is stamped with that capture time. Right after open(fridge_1) the newest graph still shows the
    fridge closed -- the case where a careless planner takes a stale graph for the world after the skill."""
    robot = Node("lagging_robot", context=ros_context)
    pub = robot.create_publisher(SceneGraph, "scene_graph", 1)
    opened_at: list[int] = []

    def publish() -> None:
        capture_ns = robot.get_clock().now().nanoseconds - LAG_NS
        graph = fridge_graph(robot, bool(opened_at) and capture_ns >= opened_at[0])
        graph.header.stamp.sec, graph.header.stamp.nanosec = divmod(capture_ns, 1_000_000_000)
        pub.publish(graph)

    def open_skill(goal_handle):
        now = robot.get_clock().now()
        opened_at.append(now.nanoseconds)
        result = ExecuteSkill.Result(success=True)
        result.finished = now.to_msg()
        goal_handle.succeed()
        return result

    ActionServer(robot, ExecuteSkill, "skills/open", open_skill)
    robot.create_timer(0.02, publish)
    owner = Node("owner", context=ros_context)
    executor = MultiThreadedExecutor(num_threads=2, context=ros_context)
    executor.add_node(robot)
    spinning = Spinning(executor)
    yield owner
    spinning.stop()
    robot.destroy_node()
    owner.destroy_node()


def test_observation_after_a_skill_is_not_older_than_the_skill(lagging_robot):
    link = RosRobot(lagging_robot, {"open": SkillEndpoint("open", "skills/open")}, RobotLinkConfig(graph_timeout=5.0))
    try:
        before = link.observe()
        assert not before.objects[0].flag("open")
        outcome = link.execute(SkillCall("open", ("fridge_1",)))
        assert outcome.success
        after = link.observe()  # graphs captured before the skill keep arriving for 0.3 s: not taken
        assert after.objects[0].flag("open")
    finally:
        link.destroy()


def test_a_task_starts_from_a_graph_taken_after_it_began(ros_context):
    """The last graph before a task (the world before a reset, the robot where the last task left it)
    is not the world the task starts in: after begin_task the first observation is a graph stamped
    after it, even when the older one is still the newest the link has."""
    import threading

    robot = Node("resetting_robot", context=ros_context)
    pub = robot.create_publisher(SceneGraph, "scene_graph", 1)
    owner = Node("task_owner", context=ros_context)
    executor = MultiThreadedExecutor(num_threads=2, context=ros_context)
    executor.add_node(robot)
    spinning = Spinning(executor)
    link = RosRobot(owner, {}, RobotLinkConfig(graph_timeout=5.0))

    def publish(is_open: bool) -> None:
        graph = fridge_graph(robot, is_open)
        graph.header.stamp = robot.get_clock().now().to_msg()
        pub.publish(graph)

    try:
        publish(False)  # the world before the reset
        deadline = time.monotonic() + 10.0
        while link._latest is None and time.monotonic() < deadline:  # noqa: SLF001 - what the link holds
            publish(False)
            time.sleep(0.05)
        assert not link.observe().objects[0].flag("open")
        link.begin_task()  # reset meanwhile: the new world's graph comes 0.3 s later
        later = threading.Timer(0.3, publish, args=(True,))
        later.start()
        assert link.observe().objects[0].flag("open"), "the task started from the graph of before it"
        later.join()
    finally:
        link.destroy()
        spinning.stop()
        robot.destroy_node()
        owner.destroy_node()


def test_no_graph_at_all_is_a_clear_error(ros_context):
    owner = Node("lonely", context=ros_context)
    link = RosRobot(owner, {}, RobotLinkConfig(graph_timeout=0.3))
    try:
        with pytest.raises(RobotLinkError, match="is the robot side publishing"):
            link.observe()
        outcome = link.execute(SkillCall("pick", ("apple_1",)))
        assert not outcome.success and outcome.failure == "unavailable" and "no action server" in outcome.message
    finally:
        link.destroy()
        owner.destroy_node()


def test_a_server_the_graph_does_not_list_still_gets_the_goal(lagging_robot):
    """Fast DDS's graph can briefly hide a server that is answering (its endpoint counts disagree under
    load); the skill must still run rather than be reported as not running."""
    link = RosRobot(lagging_robot, {"open": SkillEndpoint("open", "skills/open")}, RobotLinkConfig(server_wait=0.5))
    try:
        assert link.clients["open"].wait_for_server(timeout_sec=10.0)
        link.clients["open"].wait_for_server = lambda timeout_sec=None: False  # the graph's glitch
        outcome = link.execute(SkillCall("open", ("fridge_1",)))
        assert outcome.success, outcome.message
    finally:
        link.destroy()


def test_a_server_that_is_not_there_is_reported_not_running(ros_context):
    owner = Node("alone", context=ros_context)
    link = RosRobot(owner, {"open": SkillEndpoint("open", "skills/open")}, RobotLinkConfig(server_wait=0.3))
    try:
        outcome = link.execute(SkillCall("open", ("fridge_1",)))
        assert not outcome.success and outcome.failure == "unavailable" and "is not running" in outcome.message
    finally:
        link.destroy()
        owner.destroy_node()


def test_consecutive_graphs_in_one_process_get_different_domains():
    """A graph of the previous test may linger on its domain for a DDS lease (20 s): the next one must not
    share it, or the lingering skill servers pass for live ones."""
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as first:
        pass
    with reserved_domain() as second:
        pass
    assert first != second
