"""Manipulation skill servers: pick, place, open and close planned from perceived points and carried
out on an arm, behind the ExecuteSkill contract every skill server speaks.

The work is the core's (manipulation/ planners and executors; physical/tabletop_body.py puts them
on the PyBullet Panda with its cameras); this node only serves it. By default it serves
`manipulation/<skill>`, where robot_skills_node forwards pick / place / open / close. As the whole
robot of a table-top arm (`conceptagent ros up --body pybullet`, `make manipulation-demo`) it
serves `skills/<skill>` itself, navigate_to included (the arm reaches its whole table), and
publishes the scene graph its cameras see.

Feedback: one message per phase (looking, planning, picking, putting down, measuring) and per arm
motion, with the fraction done. Cancel: the arm stops before its next motion and the goal ends
CANCELED. One skill at a time: a goal sent while another runs is aborted with "busy". Failures
carry the manipulation code in error_msg (`pick(duck_1) failed: SLIPPED: ...`) and PHYSICAL_FAILURE
(or PRECONDITION_FAILED, SERVER_UNAVAILABLE for a skill the arm has no executor for).

Actions:     <action_prefix>/<skill> (conceptagent_ros/ExecuteSkill), for each of skills
Publishes:   grasp_markers (visualization_msgs/MarkerArray): the last grasp plan's candidates and
             the grasp taken; with publish_scene_graph: scene_graph (conceptagent_ros/SceneGraph)
             after every skill (stamped after its `finished`) and at publish_rate while idle
Services:    with publish_scene_graph: get_scene_graph (conceptagent_ros/GetSceneGraph)
Parameters:  body (string, pybullet): the arm and its cameras; pybullet is the Panda at the PyBullet
             tabletop the scene lays out (a real arm's backend, through the arm and gripper adapters,
             is to come); scene (string, tabletop); seed (int, 0); gui (bool, false);
             skills (string[], [pick, place, open, close]); action_prefix (string, manipulation);
             publish_scene_graph (bool, false); publish_rate (double, 1.0 Hz); frame_id (string, world)
"""
from __future__ import annotations

import threading
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from visualization_msgs.msg import MarkerArray

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.ros.conversions.manipulation import grasp_markers
from conceptagent_ros.ros.conversions.scene import graph_to_msg
from conceptagent_ros.ros.conversions.skills import call_from_msg, end_goal, outcome_to_result
from conceptagent_ros.ros.spin import run_node
from conceptagent_ros.skills.contract import SkillOutcome
from conceptagent_ros.srv import GetSceneGraph

BODIES = ("pybullet",)
CANCEL_POLL_SECONDS = 0.02


class ManipulationNode(Node):
    __doc__ = __doc__

    def __init__(self, node_name: str = "manipulation", namespace: str = "", **kwargs: Any):
        super().__init__(node_name, namespace=namespace, **kwargs)
        d = ParameterDescriptor
        self.declare_parameter("body", "pybullet", d(description="the arm: pybullet (the Panda at the PyBullet tabletop)"))
        self.declare_parameter("scene", "tabletop", d(description="built-in scene name or scene YAML path"))
        self.declare_parameter("seed", 0, d(description="seed of the things' poses (0: the scene file's)"))
        self.declare_parameter("gui", False, d(description="open PyBullet's window"))
        self.declare_parameter("skills", ["pick", "place", "open", "close"], d(description="skills served"))
        self.declare_parameter("action_prefix", "manipulation", d(description="actions are <prefix>/<skill>"))
        self.declare_parameter("publish_scene_graph", False, d(description="publish what the cameras see"))
        self.declare_parameter("publish_rate", 1.0, d(description="scene graph rate while idle, Hz",
                                                      floating_point_range=[FloatingPointRange(from_value=0.05,
                                                                                               to_value=10.0)]))
        self.declare_parameter("frame_id", "world", d(description="frame of the arm's base"))
        kind = self.get_parameter("body").value
        if kind not in BODIES:
            raise ConceptAgentError(f"manipulation node: body {kind!r} is not one of {', '.join(BODIES)}")
        from conceptagent_ros.physical.tabletop_body import SKILLS, TabletopBody
        from conceptagent_ros.scene.loader import load_scene

        self.scene = load_scene(self.get_parameter("scene").value)
        skills = list(self.get_parameter("skills").value)
        unknown = [s for s in skills if s not in SKILLS]
        if unknown:
            raise ConceptAgentError(f"manipulation node: no executor for {', '.join(unknown)}; it serves "
                                    f"{', '.join(SKILLS)}")
        self.body = TabletopBody(self.scene, seed=self.get_parameter("seed").value, gui=self.get_parameter("gui").value)
        self.frame = self.get_parameter("frame_id").value
        self._lock = threading.Lock()  # PyBullet is not thread-safe: one skill or one look at a time
        self._skill = threading.Lock()  # held while a skill runs: a second skill is refused, not queued
        group = ReentrantCallbackGroup()
        prefix = self.get_parameter("action_prefix").value.strip("/")
        self.servers = [ActionServer(self, ExecuteSkill, f"{prefix}/{skill}",
                                     execute_callback=lambda handle, s=skill: self._execute(handle, s),
                                     goal_callback=lambda _g: GoalResponse.ACCEPT,
                                     cancel_callback=lambda _h: CancelResponse.ACCEPT, callback_group=group)
                        for skill in skills]
        self.markers_pub = self.create_publisher(MarkerArray, "grasp_markers", 1)
        self.graph_pub = None
        if self.get_parameter("publish_scene_graph").value:
            self.graph_pub = self.create_publisher(SceneGraph, "scene_graph",
                                                   QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
            self.create_service(GetSceneGraph, "get_scene_graph", self._get_graph, callback_group=group)
            self.create_timer(1.0 / self.get_parameter("publish_rate").value, self._publish_if_idle,
                              callback_group=group)
        self.get_logger().info(f"manipulation: {kind} arm on scene '{self.scene.name}', serving "
                               f"{', '.join(f'{prefix}/{s}' for s in skills)}")

    # -- the scene as the cameras see it -----------------------------------------------------------------
    def graph_msg(self) -> SceneGraph:
        with self._lock:
            observation = self.body.observe()
        return graph_to_msg(observation, self.scene.rooms, self.scene.categories(), self.get_clock().now().to_msg(),
                            self.frame)

    def _publish_if_idle(self) -> None:
        if self.graph_pub is None or self._skill.locked():
            return  # a skill is running; its end publishes
        self.graph_pub.publish(self.graph_msg())

    def _get_graph(self, _request: GetSceneGraph.Request, response: GetSceneGraph.Response) -> GetSceneGraph.Response:
        response.graph = self.graph_msg()
        return response

    # -- one skill ---------------------------------------------------------------------------------------
    def _execute(self, goal_handle: Any, skill: str) -> ExecuteSkill.Result:
        call = call_from_msg(goal_handle.request.call)
        if call.skill != skill:
            return self._end(goal_handle, SkillOutcome(call, False, f"{call} sent to the {skill} server", "invalid"))
        if not self._skill.acquire(blocking=False):
            return self._end(goal_handle, SkillOutcome(call, False, f"{call} not executed: the arm is busy with "
                                                                    "another skill", "unavailable"))
        self._lock.acquire()  # after a look at the scene that may be under way
        from conceptagent_ros.manipulation.arm_skills import SkillWatch

        cancel = threading.Event()
        ended = threading.Event()
        watcher = threading.Thread(target=self._watch_cancel, args=(goal_handle, cancel, ended), daemon=True)
        watcher.start()
        last = [0.0]

        def progress(status: str, fraction: float) -> None:
            last[0] = fraction if fraction >= 0 else last[0]
            goal_handle.publish_feedback(ExecuteSkill.Feedback(status=f"{call}: {status}", progress=float(last[0])))

        try:
            outcome = self.body.execute(call, SkillWatch(cancel, progress))
            plan = self.body.last_grasp_plan
            if call.skill == "pick" and plan is not None:
                self.markers_pub.publish(grasp_markers(plan.candidates, self.body.last_grasp,
                                                       self.get_clock().now().to_msg(), self.frame))
        finally:
            ended.set()
            self._lock.release()
        try:
            return self._end(goal_handle, outcome)
        finally:
            self._skill.release()

    @staticmethod
    def _watch_cancel(goal_handle: Any, cancel: threading.Event, ended: threading.Event) -> None:
        while not ended.wait(CANCEL_POLL_SECONDS):
            if goal_handle.is_cancel_requested:
                cancel.set()
                return

    def _end(self, goal_handle: Any, outcome: SkillOutcome) -> ExecuteSkill.Result:
        result = outcome_to_result(outcome)
        result.finished = self.get_clock().now().to_msg()
        if self.graph_pub is not None:  # what the skill changed goes out before the result, stamped after it
            self.graph_pub.publish(self.graph_msg())
        end_goal(goal_handle, outcome)
        self.get_logger().info(outcome.message)
        return result

    def destroy_node(self) -> None:
        with self._lock:
            self.body.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    run_node(ManipulationNode, threads=4, args=args)
