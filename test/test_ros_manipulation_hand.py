"""A real arm and gripper as the manipulation executors' Arm: the GripperCommand gripper against a
stand-in server with control_msgs/GripperCommand's fields (control_msgs is not pip-installable),
and RosHand turning hand frames into the arm's tool poses, checked against the PyBullet Panda's
own kinematics; then a whole pick by the pick executor through both."""
from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest
from ros_helpers import StandInClientCalls, require_ros

require_ros()

from rclpy.task import Future  # noqa: E402

from conceptagent_ros.manipulation.hand_frame import hand_frame  # noqa: E402
from conceptagent_ros.ros.adapters.manipulation_hand import (  # noqa: E402
    ControllerUnavailable,
    GripperCommandGripper,
    GripperConfig,
    RosHand,
)


class StandInGripperCommand:
    """Same fields as control_msgs/action/GripperCommand: goal.command.{position, max_effort};
    result {position, effort, stalled, reached_goal}."""

    class Goal:
        def __init__(self) -> None:
            self.command = SimpleNamespace(position=0.0, max_effort=0.0)

    class Result:
        def __init__(self, position: float = 0.0, effort: float = 0.0, stalled: bool = False,
                     reached_goal: bool = False) -> None:
            self.position, self.effort, self.stalled, self.reached_goal = position, effort, stalled, reached_goal


class StandInGripperServer(StandInClientCalls):
    """A parallel gripper whose fingers (one joint each, position per finger) stop on a thing
    `thing` metres wide, if there is one."""

    def __init__(self, thing: float = 0.0, up: bool = True, answers: bool = True) -> None:
        self.thing, self.up, self.answers = thing, up, answers
        self.goals: list = []

    def wait_for_server(self, timeout_sec=None) -> bool:
        return self.up

    def send_goal_async(self, goal):
        self.goals.append(goal)
        per_finger = goal.command.position
        stopped = max(per_finger, self.thing / 2)
        result = Future()
        if self.answers:
            result.set_result(SimpleNamespace(result=StandInGripperCommand.Result(
                position=stopped, effort=goal.command.max_effort if stopped > per_finger else 0.0,
                stalled=stopped > per_finger, reached_goal=stopped == per_finger)))
        handle = SimpleNamespace(accepted=True, get_result_async=lambda: result, cancel_goal_async=lambda: None)
        sent = Future()
        sent.set_result(handle)
        return sent


PANDA_FINGERS = GripperConfig(action="panda_gripper/gripper_action", open_gap=0.08, max_effort=30.0,
                              position_per_gap=0.5, wait_s=0.2, motion_s=0.2)


def test_the_gripper_reads_the_gap_it_closed_on() -> None:
    server = StandInGripperServer(thing=0.035)
    gripper = GripperCommandGripper(None, PANDA_FINGERS, action_type=StandInGripperCommand, client=server)
    assert gripper.open() == pytest.approx(0.08)
    assert server.goals[-1].command.position == pytest.approx(0.04)  # one finger's joint
    assert gripper.close() == pytest.approx(0.035)  # stopped on the thing
    assert server.goals[-1].command.position == 0.0 and server.goals[-1].command.max_effort == 30.0
    server.thing = 0.0
    assert gripper.close() == pytest.approx(0.0)  # on nothing


def test_a_gripper_that_does_not_answer_is_named() -> None:
    down = GripperCommandGripper(None, PANDA_FINGERS, action_type=StandInGripperCommand,
                                 client=StandInGripperServer(up=False))
    with pytest.raises(ControllerUnavailable, match="panda_gripper/gripper_action"):
        down.close()
    stuck = GripperCommandGripper(None, PANDA_FINGERS, action_type=StandInGripperCommand,
                                  client=StandInGripperServer(answers=False))
    with pytest.raises(ControllerUnavailable, match="did not finish"):
        stuck.open()


def test_without_control_msgs_it_says_what_to_install() -> None:
    if importlib.util.find_spec("control_msgs") is not None:
        pytest.skip("control_msgs is installed here")
    with pytest.raises(ControllerUnavailable, match="control_msgs"):
        GripperCommandGripper(None)


class RecordingArm:
    def __init__(self) -> None:
        self.moves: list[tuple[np.ndarray, np.ndarray]] = []

    def move_to(self, position, quaternion=None, speed=1.0, gripper=None) -> bool:
        self.moves.append((np.asarray(position), np.asarray(quaternion)))
        return True


def test_the_hand_frame_becomes_the_pandas_tool_pose() -> None:
    """Judged by the Panda's URDF in PyBullet: the tool pose RosHand sends, solved and put on the
    arm, leaves the fingers' closing axis and the approach where the hand frame said."""
    pybullet = pytest.importorskip("pybullet")
    import pybullet_data

    arm = RecordingArm()
    hand = RosHand(arm, SimpleNamespace(gap=0.08, open=lambda: 0.08, close=lambda: 0.0))
    grasp = np.array([0.5, 0.1, 0.12])
    rotation = hand_frame(np.array([0.2, 0.0, -1.0]), np.array([0.0, 1.0, 0.0]))
    assert hand.move_hand(grasp, rotation)
    target, quaternion = arm.moves[-1]
    assert target == pytest.approx(grasp + rotation[:, 2] * 0.02)
    client = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
        panda = pybullet.loadURDF("franka_panda/panda.urdf", useFixedBase=True, physicsClientId=client)
        for _ in range(20):
            joints = pybullet.calculateInverseKinematics(panda, 11, target.tolist(), quaternion.tolist(),
                                                         maxNumIterations=200, physicsClientId=client)
            for j, q in zip([0, 1, 2, 3, 4, 5, 6], joints):
                pybullet.resetJointState(panda, j, q, physicsClientId=client)
        for finger in (9, 10):  # open: the fingers stand apart along the closing axis
            pybullet.resetJointState(panda, finger, 0.04, physicsClientId=client)
        left = np.asarray(pybullet.getLinkState(panda, 9, physicsClientId=client)[4])
        right = np.asarray(pybullet.getLinkState(panda, 10, physicsClientId=client)[4])
        palm = np.asarray(pybullet.getLinkState(panda, 8, physicsClientId=client)[4])
        tool = np.asarray(pybullet.getLinkState(panda, 11, physicsClientId=client)[4])
    finally:
        pybullet.disconnect(client)
    closing = (left - right) / np.linalg.norm(left - right)
    assert abs(closing @ rotation[:, 0]) > 0.98  # the fingers close along the hand frame's x
    approach = (tool - palm) / np.linalg.norm(tool - palm)
    assert approach @ rotation[:, 2] > 0.98  # and the hand points along its z


def test_a_pick_through_the_ros_hand_and_gripper() -> None:
    """The pick executor drives a real arm's adapters: pre-grasp, approach, close (the gripper
    stalls on the thing), lift; a miss is NOT_HELD from the gripper's gap."""
    from conceptagent_ros.manipulation.grasp_planner import GraspCandidate, GraspPlan
    from conceptagent_ros.manipulation.pick_executor import PickExecutor
    from conceptagent_ros.manipulation.robot_spec import load_robot_spec

    down = hand_frame(np.array([0.0, 0.0, -1.0]), np.array([1.0, 0.0, 0.0]))
    grasp = GraspCandidate(np.array([0.5, 0.0, 0.03]), down, 0.03, 1.0, "top", 1.0, 0.02)
    plan = GraspPlan((grasp,), 1)
    server = StandInGripperServer(thing=0.03)
    arm = RecordingArm()
    hand = RosHand(arm, GripperCommandGripper(None, PANDA_FINGERS, action_type=StandInGripperCommand, client=server))
    gripper_spec = load_robot_spec("panda").gripper
    seen = iter([np.array([0.5, 0.0, 0.03]), np.array([0.5, 0.0, 0.23])])  # where perception sees it: lifted
    result = PickExecutor(hand, gripper_spec).pick(plan, lambda: next(seen))
    assert result.success, result.message
    heights = [round(float(p[2]), 3) for p, _ in arm.moves]
    assert heights[0] > heights[1] and heights[2] > heights[1]  # in from above, grasp, lift
    server.thing = 0.0  # nothing between the fingers
    miss = PickExecutor(hand, gripper_spec).pick(plan, lambda: np.array([0.5, 0.0, 0.03]))
    assert not miss.success and miss.code == "NOT_HELD"


class StandInParallelGripperCommand:
    """Same fields as control_msgs/action/ParallelGripperCommand: goal.command (sensor_msgs/JointState);
    result {state (JointState), stalled, reached_goal}."""

    class Goal:
        def __init__(self) -> None:
            from sensor_msgs.msg import JointState

            self.command = JointState()


class StandInParallelGripperServer(StandInClientCalls):
    """Jazzy's parallel_gripper_action_controller on one finger joint: stops on a thing `thing` wide."""

    def __init__(self, thing: float = 0.0) -> None:
        self.thing, self.goals = thing, []

    def wait_for_server(self, timeout_sec=None) -> bool:
        return True

    def send_goal_async(self, goal):
        from sensor_msgs.msg import JointState

        self.goals.append(goal)
        stopped = max(goal.command.position[0], self.thing / 2)
        result = Future()
        result.set_result(SimpleNamespace(result=SimpleNamespace(
            state=JointState(name=list(goal.command.name), position=[stopped]), stalled=stopped > goal.command.position[0],
            reached_goal=stopped == goal.command.position[0])))
        sent = Future()
        sent.set_result(SimpleNamespace(accepted=True, get_result_async=lambda: result, cancel_goal_async=lambda: None))
        return sent


def test_the_parallel_gripper_controller_is_sent_its_joint_and_read_back() -> None:
    from dataclasses import replace

    config = replace(PANDA_FINGERS, interface="parallel_gripper_command", joint="left_finger_joint")
    server = StandInParallelGripperServer(thing=0.05)
    gripper = GripperCommandGripper(None, config, action_type=StandInParallelGripperCommand, client=server)
    assert gripper.open() == pytest.approx(0.08)
    sent = server.goals[-1].command
    assert list(sent.name) == ["left_finger_joint"] and list(sent.position) == pytest.approx([0.04])
    assert list(sent.effort) == pytest.approx([30.0])
    assert gripper.close() == pytest.approx(0.05)  # stopped on the 5 cm thing
    with pytest.raises(ControllerUnavailable, match="gripper.joint"):
        GripperCommandGripper(None, replace(config, joint=""), action_type=StandInParallelGripperCommand, client=server)
    with pytest.raises(ControllerUnavailable, match="gripper.interface"):
        GripperCommandGripper(None, replace(config, interface="robotiq"), action_type=StandInParallelGripperCommand,
                              client=server)
