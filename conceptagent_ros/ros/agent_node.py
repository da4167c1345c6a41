"""ROS 2 node around the closed-loop agent (the only layer that imports rclpy).

Subscribes:  ~/command (std_msgs/String)  an instruction as text (or from an ASR node)
Publishes:   ~/step (conceptagent_ros/PlanStep)  every decision as it happens
             ~/status (std_msgs/String)  one line when a task ends
Actions:     ~/run_task (conceptagent_ros/RunTask)
Parameters:  scene (string, default studio_kitchen): embedded world to run on until ROS skill
             servers are configured; llm (string, default offline); planner (string, react; any spec of
             `conceptagent run --planner`);
             max_steps (int, 40); seed (int, 0)
"""
from __future__ import annotations

import threading

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import String

from conceptagent_ros.action import RunTask
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import PlanStep
from conceptagent_ros.sim.episode import EpisodeSpec, run_episode


class AgentNode(Node):
    def __init__(self) -> None:
        super().__init__("conceptagent")
        for name, default, about in (
            ("scene", "studio_kitchen", "embedded scene name or YAML path"),
            ("llm", "offline", "offline | simulated[:RATE] | openai:MODEL | hf:PATH (grounded-decoding only)"),
            ("planner", "react", "react | base | mcts | llm-planner | tree-planner | grounded-decoding, "
                                 "with options as NAME:key=value,..."),
        ):
            self.declare_parameter(name, default, ParameterDescriptor(description=about))
        self.declare_parameter("max_steps", 40)
        self.declare_parameter("seed", 0)
        group = ReentrantCallbackGroup()
        self.step_pub = self.create_publisher(PlanStep, "~/step", 10)
        self.status_pub = self.create_publisher(String, "~/status", 10)
        self.create_subscription(String, "~/command", self.on_command, 10, callback_group=group)
        self.action_server = ActionServer(self, RunTask, "~/run_task", self.execute_task, callback_group=group,
                                          cancel_callback=lambda _: CancelResponse.REJECT)
        self._busy = threading.Lock()

    def _spec(self, instruction: str, goal: str = "", planner: str = "", max_steps: int = 0) -> EpisodeSpec:
        p = self.get_parameter
        return EpisodeSpec(instruction=instruction, scene=p("scene").value, goal=goal or None,
                           planner=planner or p("planner").value, llm=p("llm").value,
                           seed=p("seed").value, max_steps=max_steps or p("max_steps").value)

    def _publish_step(self, report) -> None:
        msg = PlanStep()
        msg.stamp = self.get_clock().now().to_msg()
        msg.step = report.step
        if report.record.call is not None:
            msg.call.skill = report.record.call.skill
            msg.call.args = list(report.record.call.args)
        msg.executed, msg.success = report.executed, report.record.success
        msg.failure = report.record.failure or ""
        msg.feedback = report.record.feedback
        msg.prompt_tokens, msg.completion_tokens = report.proposal.prompt_tokens, report.proposal.completion_tokens
        self.step_pub.publish(msg)

    def on_command(self, msg: String) -> None:
        if not self._busy.acquire(blocking=False):
            self.get_logger().warning("busy with a task; command ignored")
            return
        try:
            result = run_episode(self._spec(msg.data), on_step=self._publish_step)
            self.status_pub.publish(String(data=f"{'success' if result.success else 'failed'}: {result.stats.stop_reason}"))
        except ConceptAgentError as e:
            self.get_logger().error(str(e))
            self.status_pub.publish(String(data=f"rejected: {e}"))
        finally:
            self._busy.release()

    def execute_task(self, goal_handle):
        request = goal_handle.request
        result = RunTask.Result()
        try:
            def step(report) -> None:
                self._publish_step(report)
                feedback = RunTask.Feedback()
                feedback.last_step.step = report.step
                feedback.last_step.feedback = report.record.feedback
                goal_handle.publish_feedback(feedback)

            episode = run_episode(self._spec(request.instruction, request.goal, request.planner, request.max_steps), step)
        except ConceptAgentError as e:
            result.stop_reason = f"rejected: {e}"
            goal_handle.abort()
            return result
        result.success, result.goal, result.steps = episode.success, episode.goal, episode.stats.steps
        result.stop_reason, result.unmet = episode.stats.stop_reason, episode.unmet
        goal_handle.succeed() if episode.success else goal_handle.abort()
        return result


def main(args: list[str] | None = None) -> None:
    rclpy.init(args=args)
    node = AgentNode()
    executor = MultiThreadedExecutor()
    try:
        rclpy.spin(node, executor=executor)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
