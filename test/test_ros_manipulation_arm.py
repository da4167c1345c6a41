"""The manipulation node with body:=arm, driving a robot through the interfaces a real one has --
simulated: the arm driver is the PyBullet Panda following geometry_msgs/PoseStamped set-points and
publishing its pose (a Cartesian impedance controller's interface), the gripper a stand-in with
control_msgs/GripperCommand's fields closing the PyBullet fingers, and perception/get_object_points
answered from the tabletop cameras' points. The node knows none of that: it plans on the points it
is given and moves through the controllers. The judge is PyBullet's ground truth."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pytest
from ros_helpers import Spinning, StandInClientCalls, require_ros, wait_future

require_ros()
pytest.importorskip("pybullet")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.task import Future  # noqa: E402

from conceptagent_ros.action import ExecuteSkill  # noqa: E402
from conceptagent_ros.msg import SkillCall  # noqa: E402

NS = "/conceptagent"


class StandInGripperCommand:
    """control_msgs/action/GripperCommand's fields (control_msgs is not pip-installable)."""

    class Goal:
        def __init__(self) -> None:
            self.command = SimpleNamespace(position=0.0, max_effort=0.0)


class SimulatedRobot(StandInClientCalls):
    """The PyBullet tabletop behind standard interfaces, one lock around the physics."""

    def __init__(self, context) -> None:
        from conceptagent_ros.bodies.tabletop.grasp_world import GraspWorld
        from conceptagent_ros.evaluation.place_bench import TRAY
        from conceptagent_ros.ros.conversions.clouds import xyz_cloud
        from conceptagent_ros.srv import GetObjectPoints

        self.world = GraspWorld(["duck"], 0, tray=TRAY)
        self.table = self.world.table
        self.lock = threading.Lock()
        self.target: PoseStamped | None = None
        node = self.node = Node("simulated_robot", namespace=NS, context=context)
        self.pose_pub = node.create_publisher(PoseStamped, "ee_pose", 10)
        node.create_subscription(PoseStamped, "ee_target", self._on_target, 50)
        node.create_timer(0.01, self._control)

        def points(request, response):
            with self.lock:
                clouds = self.world.perceive()
            stamp = node.get_clock().now().to_msg()
            for name, cloud in sorted(clouds.items()):
                if not request.ids or name in request.ids:
                    response.ids.append(name)
                    response.labels.append(name)
                    response.clouds.append(xyz_cloud(cloud, "map", stamp))
            response.success = True
            return response

        node.create_service(GetObjectPoints, "perception/get_object_points", points)

    def _on_target(self, msg: PoseStamped) -> None:
        self.target = msg

    def _control(self) -> None:
        """The controller: track the latest set-point, report where the tool is."""
        with self.lock:
            if self.target is not None:
                p, o = self.target.pose.position, self.target.pose.orientation
                self.table._track(np.array([p.x, p.y, p.z]), (o.x, o.y, o.z, o.w))
            self.table.step(4)  # 4/240 s each 10 ms: ahead of the wall clock, as a real controller keeps up
            position, quaternion = self.table.ee_position(), self.table.ee_quaternion()
        msg = PoseStamped()
        msg.header.frame_id, msg.header.stamp = "map", self.node.get_clock().now().to_msg()
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in position)
        o = msg.pose.orientation
        o.x, o.y, o.z, o.w = (float(v) for v in quaternion)
        self.pose_pub.publish(msg)

    # -- the gripper's action server, as the node's GripperCommand client sees it ----------------------
    def wait_for_server(self, timeout_sec=None) -> bool:
        return True

    def send_goal_async(self, goal):
        with self.lock:
            self.table.set_gripper(goal.command.position <= 0.0)
            gap = self.table.finger_gap()
        result = Future()
        result.set_result(SimpleNamespace(result=SimpleNamespace(position=gap, effort=goal.command.max_effort,
                                                                 stalled=gap > 0.002, reached_goal=gap <= 0.002)))
        sent = Future()
        sent.set_result(SimpleNamespace(accepted=True, get_result_async=lambda: result, cancel_goal_async=lambda: None))
        return sent

    def lowest_point(self, name: str) -> float:
        with self.lock:
            return float(self.table.p.getAABB(self.table.things[name], physicsClientId=self.table.client)[0][2])


def test_a_real_arms_interfaces_pick_the_duck_and_put_it_in_the_tray(ros_context) -> None:
    from conceptagent_ros.evaluation.place_bench import TRAY, judge_placed
    from conceptagent_ros.ros.bringup import overrides
    from conceptagent_ros.ros.manipulation_node import ManipulationNode

    robot = SimulatedRobot(ros_context)
    robot_executor = SingleThreadedExecutor(context=ros_context)
    robot_executor.add_node(robot.node)
    robot_spinning = Spinning(robot_executor, "robot")
    arm = ManipulationNode(namespace=NS, context=ros_context, gripper_client=robot,
                           gripper_action_type=StandInGripperCommand,
                           parameter_overrides=overrides({"body": "arm", "frame_id": "map", "arm.kind": "pose_topic",
                                                          "arm.base_speed": 0.3}))
    client = Node("client", context=ros_context)
    executor = MultiThreadedExecutor(num_threads=4, context=ros_context)
    executor.add_node(arm)
    executor.add_node(client)
    spinning = Spinning(executor, "arm")
    try:
        pick = ActionClient(client, ExecuteSkill, f"{NS}/manipulation/pick")
        place = ActionClient(client, ExecuteSkill, f"{NS}/manipulation/place")
        assert pick.wait_for_server(timeout_sec=20.0) and place.wait_for_server(timeout_sec=20.0)
        statuses: list[str] = []
        handle = wait_future(pick.send_goal_async(ExecuteSkill.Goal(call=SkillCall(skill="pick", args=["duck"])),
                                                  feedback_callback=lambda m: statuses.append(m.feedback.status)), 20.0)
        result = wait_future(handle.get_result_async(), 180.0).result
        assert result.success, result.error_msg
        assert any("planning a grasp of duck" in s for s in statuses)
        assert robot.lowest_point("duck") > 0.10, "the node said picked, the physics says the duck is not up"
        handle = wait_future(place.send_goal_async(ExecuteSkill.Goal(call=SkillCall(skill="place",
                                                                                    args=["duck", "tray"]))), 20.0)
        result = wait_future(handle.get_result_async(), 180.0).result
        assert result.success, result.error_msg
        with robot.lock:
            placed, why = judge_placed(robot.world, "duck", TRAY)
        assert placed, why
        # an object perception does not have is a named failure, and nothing moves
        handle = wait_future(pick.send_goal_async(ExecuteSkill.Goal(call=SkillCall(skill="pick", args=["unicorn"]))),
                             20.0)
        result = wait_future(handle.get_result_async(), 60.0).result
        assert not result.success and "NOT_SEEN" in result.error_msg
        assert result.error_code == ExecuteSkill.Result.PHYSICAL_FAILURE
    finally:
        spinning.stop()
        robot_spinning.stop()
        arm.destroy_node()
        client.destroy_node()
        robot.node.destroy_node()
        robot.world.close()


def test_the_panda_params_file_names_only_parameters_the_node_declares(ros_context) -> None:
    import yaml

    from conceptagent_ros.paths import config_dir
    from conceptagent_ros.ros.bringup import overrides
    from conceptagent_ros.ros.manipulation_node import ManipulationNode

    params = yaml.safe_load((config_dir() / "ros" / "manipulation_panda.yaml").read_text())
    values = params["/conceptagent/manipulation"]["ros__parameters"]
    node = ManipulationNode(namespace=NS, context=ros_context, gripper_client=SimpleNamespace(),
                            gripper_action_type=StandInGripperCommand, parameter_overrides=overrides(values))
    try:
        assert all(node.has_parameter(k) for k in values), [k for k in values if not node.has_parameter(k)]
    finally:
        node.destroy_node()
