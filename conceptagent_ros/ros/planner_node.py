"""The planner node: instructions in, skill goals out, through the core agent loop.

It reaches the robot only through RosRobot (ros/robot_client.py): observations from the scene
graph service (or topic), skills through action clients whose names and types come from
parameters. It never touches a simulator.

Subscribes:  command (std_msgs/String)                       an instruction as text (or from the speech node)
             scene_graph (conceptagent_ros/SceneGraph)         observations (or the get_scene_graph service)
Publishes:   task_status (conceptagent_ros/TaskStatus)         on every state change and step; transient local
             plan_steps (conceptagent_ros/PlanStep)            every decision as it happens
             plan_markers (visualization_msgs/MarkerArray)     the steps so far, and the search tree / current plan
                                                               of planners that look ahead (mcts, tree-planner, llm-planner)
Actions:     execute_task (conceptagent_ros/ExecuteTask)       instruction [+ goal] -> success, steps; feedback per step
Services:    verify_action (conceptagent_ros/VerifyAction)     check a skill call's preconditions on the current graph
Clients:     skills/<skill> (conceptagent_ros/ExecuteSkill)    one per skill, renamed by skills.<skill>.action
             (skill clients and observations live on the `planner_link` node: ros/robot_client.py)
Parameters:  llm (string, offline), planner (string, react), max_steps (int, 40), seed (int, 0),
             preempt (bool, false): a new task while busy replaces the running one instead of being rejected,
             observation_source (string, topic | service), scene_graph_service (string), scene_graph_topic (string),
             skill_server_wait (double, 5.0 s), skill_timeout (double, 120 s), graph_timeout (double, 5 s),
             frame_id (string, map), skills.<skill>.action (string, skills/<skill>),
             skills.<skill>.type (string, conceptagent_ros/action/ExecuteSkill)
"""
from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from conceptagent_ros.action import ExecuteTask
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import PlanStep, TaskStatus
from conceptagent_ros.planning.agent import StepReport
from conceptagent_ros.planning.free_text.known import known_places
from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.planning.plan_view import plan_view_of
from conceptagent_ros.planning.task import TaskMap, TaskOutcome, TaskRequest, prepare_task, run_task
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.ros.action_server import ActionServer
from conceptagent_ros.ros.conversions.markers import plan_markers
from conceptagent_ros.ros.conversions.plan import status_msg, step_to_msg
from conceptagent_ros.ros.conversions.skills import call_from_msg
from conceptagent_ros.ros.node_teardown import DestroysItsActions
from conceptagent_ros.ros.robot_client import EXECUTE_SKILL_TYPE, RobotLinkConfig, RosRobot, SkillEndpoint
from conceptagent_ros.ros.spin import run_node
from conceptagent_ros.scene.graph import SceneGraph
from conceptagent_ros.scene.symbolic import load_predicates
from conceptagent_ros.skills.contract import load_skill_library
from conceptagent_ros.srv import VerifyAction

PREEMPT_WAIT_SECONDS = 5.0
TASK_STOP_SECONDS = 2.0  # for a canceled task to end its goal at shutdown
MARKER_LINES = 12


@dataclass
class RunningTask:
    task_id: str
    instruction: str
    cancel: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    preempted: bool = False


def describe(name: str, text: str, **ranges: object) -> ParameterDescriptor:
    return ParameterDescriptor(name=name, description=text, **ranges)


class PlannerNode(DestroysItsActions, Node):
    __doc__ = __doc__

    def __init__(self, node_name: str = "planner", namespace: str = "", **kwargs: object):
        super().__init__(node_name, namespace=namespace, **kwargs)
        self.skills = load_skill_library()
        p = self.declare_parameter
        p("llm", "offline", describe("llm", "offline | simulated[:RATE] | openai:MODEL | hf:PATH (grounded-decoding)"))
        p("planner", "react", describe("planner", "react | base | mcts | llm-planner | tree-planner | grounded-decoding, "
                                                  "with options as NAME:key=value,..."))
        steps = [IntegerRange(from_value=1, to_value=10000)]
        p("max_steps", 40, describe("max_steps", "decisions per task", integer_range=steps))
        p("seed", 0, describe("seed", "seed of the planner's and simulated model's randomness"))
        p("preempt", False, describe("preempt", "a new task while one runs replaces it (true) or is rejected (false)"))
        p("observation_source", "topic", describe("observation_source", "topic (scene_graph, stamped after the last skill) "
                                                                         "or service (get_scene_graph)"))
        p("scene_graph_service", "get_scene_graph", describe("scene_graph_service", "GetSceneGraph service name"))
        p("scene_graph_topic", "scene_graph", describe("scene_graph_topic", "SceneGraph topic name"))
        seconds = [FloatingPointRange(from_value=0.0, to_value=3600.0)]
        p("skill_server_wait", 5.0, describe("skill_server_wait", "seconds to wait for a skill server",
                                             floating_point_range=seconds))
        p("skill_timeout", 120.0, describe("skill_timeout", "seconds a skill may run before it is canceled",
                                           floating_point_range=seconds))
        p("graph_timeout", 5.0, describe("graph_timeout", "seconds to wait for a scene graph", floating_point_range=seconds))
        p("frame_id", "map", describe("frame_id", "frame of the markers"))
        endpoints = {}
        for skill in self.skills.actionable():
            action = p(f"skills.{skill.name}.action", f"skills/{skill.name}",
                       describe(f"skills.{skill.name}.action", f"action server of the {skill.name} skill")).value
            kind = p(f"skills.{skill.name}.type", EXECUTE_SKILL_TYPE,
                     describe(f"skills.{skill.name}.type", "action type of that server")).value
            endpoints[skill.name] = SkillEndpoint(skill.name, action, kind)

        self.group = ReentrantCallbackGroup()
        link = RobotLinkConfig(
            observation=self._param("observation_source"), graph_service=self._param("scene_graph_service"),
            graph_topic=self._param("scene_graph_topic"), server_wait=self._param("skill_server_wait"),
            skill_timeout=self._param("skill_timeout"), graph_timeout=self._param("graph_timeout"),
        )
        self.robot = RosRobot(self, endpoints, link)
        latched = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.status_pub = self.create_publisher(TaskStatus, "task_status", latched)
        self.step_pub = self.create_publisher(PlanStep, "plan_steps", 50)
        self.marker_pub = self.create_publisher(MarkerArray, "plan_markers", 1)
        self.create_subscription(String, "command", self._on_command, 10, callback_group=self.group)
        self.action_server = ActionServer(
            self, ExecuteTask, "execute_task", execute_callback=self._execute_goal, goal_callback=self._accept_goal,
            cancel_callback=self._cancel_goal, callback_group=self.group,
        )
        self.create_service(VerifyAction, "verify_action", self._verify, callback_group=self.group)
        self._lock = threading.Lock()
        self._current: RunningTask | None = None
        self._ids = itertools.count(1)
        self._by_goal: dict[bytes, RunningTask] = {}
        self._publish_status(TaskStatus.IDLE, message="ready")
        self.get_logger().info(f"planner ready: planner={self._param('planner')} llm={self._param('llm')}")

    def _param(self, name: str):  # noqa: ANN202 - the parameter's own type
        return self.get_parameter(name).value

    # -- task bookkeeping ------------------------------------------------------------------------------
    def _claim(self, task: RunningTask) -> str | None:
        """Make `task` the running one; returns why not (busy and preemption off)."""
        with self._lock:
            running = self._current
            if running is None:
                self._current = task
                return None
            if not self._param("preempt"):
                return f"busy with task {running.task_id} ({running.instruction!r}); set preempt:=true to replace it"
            running.preempted = True
            running.cancel.set()
        if not running.finished.wait(PREEMPT_WAIT_SECONDS):
            return f"task {running.task_id} did not stop within {PREEMPT_WAIT_SECONDS:.0f} s"
        with self._lock:
            if self._current is not None:
                return "another task started first"
            self._current = task
            return None

    def _release(self, task: RunningTask) -> None:
        with self._lock:
            if self._current is task:
                self._current = None
        task.finished.set()

    def _publish_status(self, state: int, task: RunningTask | None = None, goal: str = "", step: int = 0,
                        message: str = "") -> None:
        self.status_pub.publish(status_msg(state, self.get_clock().now().to_msg(), task.task_id if task else "",
                                           task.instruction if task else "", goal, step, message))

    def _run(self, task: RunningTask, request: TaskRequest,
             on_step: Callable[[StepReport], None] | None = None) -> TaskOutcome:
        """Observe, prepare (all input checks), then run the loop. Raises ConceptAgentError on bad input."""
        self.robot.begin_task()  # the world as it is now, not as the last graph before the task showed it
        snapshot = self.robot.snapshot()
        seen = {o.id: o.category for o in snapshot.observation.objects}
        task_map = TaskMap(snapshot.rooms, snapshot.vocabulary | frozenset(seen.values()), seen,
                           {o.id: o.affordances for o in snapshot.observation.objects},
                           {o.id: dict(o.attributes) for o in snapshot.observation.objects if o.attributes},
                           unseen_ids_by_name=True, known_places=known_places(snapshot.observation.objects))
        prepared = prepare_task(request, task_map, self.skills)
        goal = prepared.goal.text
        self._publish_status(TaskStatus.RUNNING, task, goal, 0, f"pursuing {goal}")
        lines: list[str] = []

        def step(report: StepReport) -> None:
            now = self.get_clock().now().to_msg()
            self.step_pub.publish(step_to_msg(report, task.task_id, now))
            call = report.record.call
            mark = "+" if report.executed and report.record.success else ("x" if report.executed else "-")
            lines.append(f"{report.step:>2} {mark} {call if call else '(unusable reply)'}")
            robot = self.robot.last_robot
            if robot is not None:
                self.marker_pub.publish(plan_markers([task.instruction, *lines[-MARKER_LINES:]], robot, now,
                                                     self._param("frame_id"), plan_view_of(prepared.built.proposer)))
            self._publish_status(TaskStatus.RUNNING, task, goal, report.step, report.record.said()[:500])
            if on_step is not None:
                on_step(report)

        self.robot.cancel = task.cancel
        return run_task(prepared, self.robot, snapshot.observation.robot, step, task.cancel)

    def _finish_state(self, task: RunningTask, outcome: TaskOutcome) -> tuple[int, str]:
        if task.preempted:
            return TaskStatus.PREEMPTED, "preempted by a newer task"
        if outcome.stats.canceled:
            return TaskStatus.CANCELED, "canceled"
        if outcome.believed_success:
            return TaskStatus.SUCCEEDED, f"goal reached in {outcome.stats.steps} steps"
        unmet = ", ".join(outcome.believed_unmet) or "the goal"
        return TaskStatus.FAILED, f"{outcome.stats.stop_reason}; unmet: {unmet}"

    # -- text commands ---------------------------------------------------------------------------------
    def _on_command(self, msg: String) -> None:
        task = RunningTask(f"cmd-{next(self._ids)}", " ".join(str(msg.data).split())[:200])
        refused = self._claim(task)
        if refused is not None:
            self.get_logger().warning(f"command refused: {refused}")
            self._publish_status(TaskStatus.REJECTED, task, message=refused)
            return
        try:
            outcome = self._run(task, self._request(msg.data))
            state, text = self._finish_state(task, outcome)
            self._publish_status(state, task, outcome.goal.text, outcome.stats.steps, text)
        except ConceptAgentError as e:
            self.get_logger().error(f"task {task.task_id}: {e}")
            self._publish_status(TaskStatus.REJECTED, task, message=str(e))
        finally:
            self._release(task)

    def _request(self, instruction: str, goal: str = "", planner: str = "", max_steps: int = 0) -> TaskRequest:
        return TaskRequest(instruction=instruction, goal=goal or None, planner=planner or self._param("planner"),
                           llm=self._param("llm"), seed=self._param("seed"),
                           max_steps=max_steps or self._param("max_steps"))

    # -- the ExecuteTask action --------------------------------------------------------------------------
    def _accept_goal(self, _request: ExecuteTask.Goal) -> GoalResponse:
        with self._lock:
            busy = self._current is not None
        if busy and not self._param("preempt"):
            self.get_logger().warning("ExecuteTask goal rejected: busy (preempt is false)")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _cancel_goal(self, goal_handle) -> CancelResponse:  # noqa: ANN001 - rclpy's ServerGoalHandle
        task = self._by_goal.get(bytes(goal_handle.goal_id.uuid))
        if task is not None:
            task.cancel.set()
        return CancelResponse.ACCEPT

    def _execute_goal(self, goal_handle) -> ExecuteTask.Result:  # noqa: ANN001
        request = goal_handle.request
        key = bytes(goal_handle.goal_id.uuid)
        task = RunningTask(f"goal-{next(self._ids)}", " ".join(request.instruction.split())[:200])
        result = ExecuteTask.Result()
        refused = self._claim(task)
        if refused is not None:
            self._publish_status(TaskStatus.REJECTED, task, message=refused)
            result.error_code, result.error_msg = ExecuteTask.Result.PLANNER_ERROR, refused
            goal_handle.abort()
            return result
        self._by_goal[key] = task
        if goal_handle.is_cancel_requested:
            task.cancel.set()

        def feedback(report: StepReport) -> None:
            fb = ExecuteTask.Feedback()
            fb.last_step = step_to_msg(report, task.task_id, self.get_clock().now().to_msg())
            goal_handle.publish_feedback(fb)

        try:
            outcome = self._run(task, self._request(request.instruction, request.goal, request.planner,
                                                    request.max_steps), feedback)
        except ConceptAgentError as e:
            self.get_logger().error(f"task {task.task_id}: {e}")
            self._publish_status(TaskStatus.REJECTED, task, message=str(e))
            result.error_code, result.error_msg = ExecuteTask.Result.INVALID_INSTRUCTION, str(e)
            goal_handle.abort()
            return result
        finally:
            self._by_goal.pop(key, None)
            self._release(task)
        state, text = self._finish_state(task, outcome)
        self._publish_status(state, task, outcome.goal.text, outcome.stats.steps, text)
        result.success, result.goal, result.steps = outcome.believed_success, outcome.goal.text, outcome.stats.steps
        result.unmet, result.error_msg = list(outcome.believed_unmet), text
        result.planning_seconds, result.acting_seconds = outcome.stats.planning_seconds, outcome.stats.acting_seconds
        if state == TaskStatus.SUCCEEDED:
            goal_handle.succeed()
        elif state == TaskStatus.CANCELED and goal_handle.is_cancel_requested:
            result.error_code = ExecuteTask.Result.CANCELED
            goal_handle.canceled()
        else:
            result.error_code = {TaskStatus.PREEMPTED: ExecuteTask.Result.PREEMPTED,
                                 TaskStatus.CANCELED: ExecuteTask.Result.CANCELED}.get(
                state, ExecuteTask.Result.GOAL_NOT_REACHED)
            goal_handle.abort()
        return result

    # -- verify_action ---------------------------------------------------------------------------------
    def _verify(self, request: VerifyAction.Request, response: VerifyAction.Response) -> VerifyAction.Response:
        try:
            snapshot = self.robot.snapshot()
            vocabulary = snapshot.vocabulary | {o.category for o in snapshot.observation.objects}
            domain = cached_domain(load_predicates(), self.skills, TaskMap(snapshot.rooms, vocabulary).domain_types())
            graph = SceneGraph(snapshot.rooms, snapshot.observation.robot)
            graph.integrate(snapshot.observation)
            verdict = PreconditionVerifier(domain, self.skills, hint=graph.near_hint).verify(
                call_from_msg(request.call), graph.symbolic_state())
        except ConceptAgentError as e:
            response.feasible, response.feedback = False, str(e)
            return response
        response.feasible = verdict.feasible
        response.unsatisfied = [u.reason for u in verdict.unsatisfied]
        response.feedback = verdict.feedback() if not verdict.feasible else "all preconditions hold"
        return response

    def stop_tasks(self, timeout: float = TASK_STOP_SECONDS) -> bool:
        """Cancel the running task, if any, and wait up to `timeout` s for it to end (shutting down:
        while the executors still run, so its goal ends and the robot is asked to stop); True if none runs."""
        with self._lock:
            running = self._current
        if running is None:
            return True
        running.cancel.set()
        return running.finished.wait(timeout)

    def destroy_node(self) -> None:
        with self._lock:
            if self._current is not None:
                self._current.cancel.set()
        self.robot.destroy()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    run_node(PlannerNode, threads=8, args=args)
