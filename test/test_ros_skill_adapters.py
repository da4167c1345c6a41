"""Real-robot skill adapters under real rclpy: navigate_to through stand-ins of Nav2's
navigate_to_pose client and of nav2_simple_commander's BasicNavigator (which only waits for Nav2 to
be active), manipulation forwarded to stand-in ExecuteSkill servers over DDS."""
from __future__ import annotations

import math
import sys
import threading
import time
import types

import pytest
from ros_helpers import Spinning, require_ros, wait_future, wait_until

require_ros()

from rclpy.action import ActionClient, ActionServer, CancelResponse  # noqa: E402
from rclpy.callback_groups import ReentrantCallbackGroup  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from conceptagent_ros.action import ExecuteSkill  # noqa: E402
from conceptagent_ros.msg import Room as RoomMsg  # noqa: E402
from conceptagent_ros.msg import SceneGraph, SceneObject, SkillCall  # noqa: E402


class FakeNavigator:
    """BasicNavigator as the adapter uses it: only to wait until Nav2 is active."""

    activated = 0

    def __init__(self, node_name="basic_navigator", namespace=""):
        pass

    def waitUntilNav2Active(self, navigator="bt_navigator", localizer="amcl"):
        FakeNavigator.activated += 1

    def destroy_node(self):
        pass


class StandInNavigateToPose:
    """nav2_msgs/action/NavigateToPose's goal field (nav2_msgs is not pip-installable)."""

    class Goal:
        def __init__(self):
            self.pose = None


class StandInNav2Client:
    """Nav2's navigate_to_pose as the project's ActionClient serves it: feedback while driving, done
    after a few ticks unless told to hang; a cancel request ends the goal as canceled."""

    def __init__(self):
        self.goals, self.hang = [], False

    def send_goal_reliably(self, goal, feedback_callback=None, *, timeout, cancel=None, **_):
        from conceptagent_ros.ros.action_client import GoalAnswer

        self.goals.append(goal.pose)
        stop = threading.Event()
        return GoalAnswer(types.SimpleNamespace(feedback=feedback_callback, stop=stop, cancel_goal_async=stop.set))

    def get_result_reliably(self, handle, *, timeout, cancel=None, **_):
        from action_msgs.msg import GoalStatus

        from conceptagent_ros.ros.action_client import ResultAnswer

        deadline = time.monotonic() + timeout
        for tick in range(1, 10_000):
            if handle.stop.is_set():
                return ResultAnswer(types.SimpleNamespace(status=GoalStatus.STATUS_CANCELED, result=None))
            if cancel is not None and cancel.is_set():
                return ResultAnswer(None, "canceled")
            if time.monotonic() > deadline:
                return ResultAnswer(None, "timeout")
            if not self.hang and tick > 3:
                return ResultAnswer(types.SimpleNamespace(status=GoalStatus.STATUS_SUCCEEDED,
                                                          result=types.SimpleNamespace(error_code=0, error_msg="")))
            handle.feedback(types.SimpleNamespace(feedback=types.SimpleNamespace(distance_remaining=1.0 / tick)))
            time.sleep(0.05)
        raise AssertionError("unreachable")


@pytest.fixture
def fake_nav2(monkeypatch):
    package = types.ModuleType("nav2_simple_commander")
    module = types.ModuleType("nav2_simple_commander.robot_navigator")
    module.BasicNavigator = FakeNavigator
    package.robot_navigator = module
    monkeypatch.setitem(sys.modules, "nav2_simple_commander", package)
    monkeypatch.setitem(sys.modules, "nav2_simple_commander.robot_navigator", module)
    FakeNavigator.activated = 0
    return StandInNav2Client()


def _fridge_graph() -> SceneGraph:
    """A scene graph in map with a fridge (0.8 x 0.6 m) at (3, 0) and the robot at the origin."""
    graph = SceneGraph()
    graph.header.frame_id = "map"
    fridge = SceneObject(id="fridge_1", label="fridge")
    fridge.pose.position.x, fridge.pose.orientation.w = 3.0, 1.0
    fridge.size.x, fridge.size.y, fridge.size.z = 0.8, 0.6, 0.9
    graph.objects = [fridge]
    graph.robot.pose.orientation.w = 1.0
    return graph


@pytest.fixture
def rig(ros_context, fake_nav2):
    """RobotSkillsNode + a test node holding a stand-in pick server, a scene graph publisher and clients."""
    from conceptagent_ros.ros.adapters.nav2_navigator import NavigatorWorker
    from conceptagent_ros.ros.robot_skills_node import RobotSkillsNode

    navigator = NavigatorWorker(client=fake_nav2, goal_type=StandInNavigateToPose.Goal)
    skills = RobotSkillsNode(namespace="r", context=ros_context, navigator=navigator)
    test = Node("adapter_test", namespace="r", context=ros_context)
    group = ReentrantCallbackGroup()

    def pick(goal_handle):
        args = list(goal_handle.request.call.args)
        result = ExecuteSkill.Result()
        if args == ["apple_1"]:
            goal_handle.publish_feedback(ExecuteSkill.Feedback(status="closing gripper", progress=0.5))
            result.success = True
            goal_handle.succeed()
        else:
            result.error_code, result.error_msg = ExecuteSkill.Result.PHYSICAL_FAILURE, f"grasp of {args} slipped"
            goal_handle.abort()
        return result

    server = ActionServer(test, ExecuteSkill, "manipulation/pick", pick, callback_group=group,
                          cancel_callback=lambda _h: CancelResponse.ACCEPT)
    graph_pub = test.create_publisher(SceneGraph, "scene_graph", 1)
    executor = MultiThreadedExecutor(num_threads=6, context=ros_context)
    executor.add_node(skills)
    executor.add_node(test)
    spinning = Spinning(executor)

    def call(skill: str, *args: str, cancel_after: float | None = None):
        client = ActionClient(test, ExecuteSkill, f"skills/{skill}")
        assert client.wait_for_server(timeout_sec=5.0)
        feedback = []
        handle = wait_future(client.send_goal_async(ExecuteSkill.Goal(call=SkillCall(skill=skill, args=list(args))),
                                                    feedback_callback=lambda m: feedback.append(m.feedback)))
        if cancel_after is not None:
            time.sleep(cancel_after)
            wait_future(handle.cancel_goal_async())
        response = wait_future(handle.get_result_async(), 10.0)
        return response.result, feedback

    graph = _fridge_graph()
    graph.rooms = [RoomMsg(id="kitchen_1", category="kitchen", x_min=0.0, y_min=0.0, x_max=4.0, y_max=2.0)]
    graph_pub.publish(graph)
    wait_until(lambda: skills._graph is not None, 5.0, "scene graph received")
    yield types.SimpleNamespace(call=call, skills=skills)
    spinning.stop()
    server.destroy()
    test.destroy_node()
    skills.destroy_node()


def test_navigate_to_drives_to_the_approach_pose(rig, fake_nav2):
    result, feedback = rig.call("navigate_to", "fridge_1")
    assert result.success, result.error_msg
    pose = fake_nav2.goals[-1].pose
    # fridge at x=3 with a 0.8 x 0.6 box: half diagonal 0.5 m + 0.35 m standoff, approached from the robot (x=0)
    assert pose.position.x == pytest.approx(2.15) and pose.position.y == pytest.approx(0.0)
    yaw = math.atan2(2 * pose.orientation.w * pose.orientation.z, 1 - 2 * pose.orientation.z ** 2)
    assert yaw == pytest.approx(0.0, abs=1e-9)  # facing the fridge
    assert fake_nav2.goals[-1].header.frame_id == "map"
    assert feedback and "m to go" in feedback[0].status
    assert FakeNavigator.activated == 1  # waited for Nav2's lifecycle nodes before the first goal


def test_navigate_to_a_room_and_to_an_unknown_object(rig, fake_nav2):
    result, _ = rig.call("navigate_to", "kitchen_1")
    assert result.success
    assert (fake_nav2.goals[-1].pose.position.x, fake_nav2.goals[-1].pose.position.y) == (2.0, 1.0)
    result, _ = rig.call("navigate_to", "unicorn_1")
    assert not result.success and result.error_code == ExecuteSkill.Result.UNKNOWN_OBJECT
    assert "unicorn_1" in result.error_msg


def test_navigation_cancel_reaches_nav2(rig, fake_nav2):
    fake_nav2.hang = True
    # Nav2 hangs: a result at all (call waits 10 s for it) says the cancel reached it
    result, _ = rig.call("navigate_to", "fridge_1", cancel_after=0.3)
    assert not result.success and result.error_code == ExecuteSkill.Result.CANCELED


def test_manipulation_is_forwarded_with_feedback_and_error_codes(rig):
    ok, feedback = rig.call("pick", "apple_1")
    assert ok.success and feedback and feedback[0].status == "closing gripper"
    failed, _ = rig.call("pick", "plate_1")
    assert not failed.success and failed.error_code == ExecuteSkill.Result.PHYSICAL_FAILURE
    assert "slipped" in failed.error_msg


def test_absent_manipulation_server_is_reported(rig):
    result, _ = rig.call("place", "apple_1", "fridge_1")
    assert not result.success and result.error_code == ExecuteSkill.Result.SERVER_UNAVAILABLE
    assert "manipulation/place" in result.error_msg


def test_navigation_without_nav2_installed_fails_cleanly(ros_context, monkeypatch):
    from conceptagent_ros.ros.adapters.nav2_navigator import NavigatorUnavailable, NavigatorWorker

    monkeypatch.setitem(sys.modules, "nav2_simple_commander", None)  # import fails as on a pip install
    worker = NavigatorWorker(wait_active=False)
    with pytest.raises(NavigatorUnavailable, match="nav2_simple_commander"):
        worker.navigate(None, threading.Event(), ready_timeout=5.0)
    worker.shutdown()


def _grid_with_a_table_before_the_fridge():
    """Nav2's map (nav_msgs/OccupancyGrid, 5 cm cells) of a 6 x 4 m room with a table right where the
    straight approach to the fridge at (3, 0) would stand the base."""
    from nav_msgs.msg import OccupancyGrid

    msg = OccupancyGrid()
    msg.info.resolution, msg.info.width, msg.info.height = 0.05, 120, 80
    msg.info.origin.position.x, msg.info.origin.position.y, msg.info.origin.orientation.w = -1.0, -2.0, 1.0
    cells = [[0] * 120 for _ in range(80)]
    for row in range(80):
        for col in range(120):
            x, y = -1.0 + (col + 0.5) * 0.05, -2.0 + (row + 0.5) * 0.05
            if 1.85 <= x <= 2.45 and -0.35 <= y <= 0.35:  # the table
                cells[row][col] = 100
            if 2.6 <= x <= 3.4 and -0.3 <= y <= 0.3:  # the fridge itself
                cells[row][col] = 100
    msg.data = [v for row in cells for v in row]
    return msg


def test_approach_poses_stand_where_nav2s_map_is_free():
    from conceptagent_ros.navigation.path_planner import costmap
    from conceptagent_ros.ros.conversions.maps import occupancy_from_msg
    from conceptagent_ros.ros.robot_skills_node import ApproachGround, navigation_goal
    from conceptagent_ros.skills.contract import SkillCall as Call

    grid = occupancy_from_msg(_grid_with_a_table_before_the_fridge())
    graph = _fridge_graph()
    call = Call("navigate_to", ("fridge_1",))

    def clearance(goal) -> float:
        cm = costmap(grid, 0.27)
        row, col = grid.cell_of(goal.pose.position.x, goal.pose.position.y)
        return float(cm.clearance[row, col])

    straight = navigation_goal(call, graph, 0.35, "map")  # the line toward the robot: into the table
    assert clearance(straight) < 0.22
    ground = ApproachGround(costmap(grid, 0.27))
    goal = navigation_goal(call, graph, 0.35, "map", ground)
    assert clearance(goal) >= 0.27  # the base's radius and the planning margin
    x, y = goal.pose.position.x, goal.pose.position.y
    assert math.hypot(x - 3.0, y) <= 0.5 + 0.35 + 0.9  # still within reach of the fridge
    yaw = math.atan2(2 * goal.pose.orientation.w * goal.pose.orientation.z, 1 - 2 * goal.pose.orientation.z ** 2)
    assert abs(math.remainder(yaw - math.atan2(-y, 3.0 - x), math.tau)) < 1e-6  # facing it


def test_an_unusable_map_is_refused_with_its_reason():
    from conceptagent_ros.errors import ConceptAgentError
    from conceptagent_ros.ros.conversions.maps import occupancy_from_msg

    msg = _grid_with_a_table_before_the_fridge()
    msg.data = msg.data[:-1]
    with pytest.raises(ConceptAgentError, match="malformed occupancy grid"):
        occupancy_from_msg(msg)
    msg = _grid_with_a_table_before_the_fridge()
    msg.info.origin.orientation.z, msg.info.origin.orientation.w = 0.3826834, 0.9238795
    with pytest.raises(ConceptAgentError, match="rotated"):
        occupancy_from_msg(msg)
