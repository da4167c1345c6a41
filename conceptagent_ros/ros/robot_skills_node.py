"""Skill servers for a real robot: navigation through Nav2, manipulation forwarded to your stack.

navigate_to(target) drives the base, through Nav2's navigate_to_pose action (the project's action
client; ros/adapters/nav2_navigator.py), to an approach pose for the target's box in the latest
scene graph, chosen on Nav2's map by the embedded navigator's rule (navigation/approach.py: free
for the base, joined to where it stands, no wall between it and the object), or to a room's centre.
pick / place / open / close (and any skill listed in forward_skills) are forwarded, goal, feedback, cancel and result, to the
manipulation action servers named by parameters, which speak the same ExecuteSkill contract.

Actions:     skills/navigate_to (conceptagent_ros/ExecuteSkill)   served here, with Nav2
             skills/<skill> (conceptagent_ros/ExecuteSkill)       forwarded, for each of forward_skills
Subscribes:  scene_graph (conceptagent_ros/SceneGraph)            object boxes and the robot's pose
             /map (nav_msgs/OccupancyGrid, transient local)       where approach poses may stand
Clients:     navigate_to_pose (nav2_msgs/NavigateToPose), forward.<skill>.action (conceptagent_ros/ExecuteSkill)
Parameters:  scene_graph_topic (string, scene_graph), frame_id (string, map),
             navigation.enabled (bool, true), navigation.standoff (double, 0.35 m),
             navigation.wait_active (bool, true): wait for Nav2's lifecycle nodes, navigation.localizer (string, amcl),
             navigation.map_topic (string, /map): approach poses free on it, by the embedded navigator's rule
             (navigation/approach.py; '' or no map yet: scene/geometry.approach_pose alone),
             navigation.scene (string, ""): a scene whose walls no approach pose sees through,
             navigation.reach (double, 0.9 m),
             forward_skills (string[], [pick, place, open, close]),
             forward.<skill>.action (string, manipulation/<skill>), forward.<skill>.timeout (double, 120 s),
             server_wait (double, 2.0 s),
             outcomes_service (string, record_skill_outcome): each skill's outcome goes to the scene graph
             node (ros/scene_graph_node.py) before the planner hears it; "" -- tell nobody
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import OccupancyGrid
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.msg import SceneGraph
from conceptagent_ros.msg import SkillCall as SkillCallMsg
from conceptagent_ros.navigation.approach import approach_goal
from conceptagent_ros.navigation.errors import NavigationError
from conceptagent_ros.navigation.path_planner import Costmap, costmap
from conceptagent_ros.ros.action_client import ActionClient
from conceptagent_ros.ros.action_server import ActionServer
from conceptagent_ros.ros.adapters.nav2_navigator import NavigatorUnavailable, NavigatorWorker
from conceptagent_ros.ros.conversions.maps import occupancy_from_msg
from conceptagent_ros.ros.conversions.scene import pose_msg, pose_position, resolve_alias
from conceptagent_ros.ros.conversions.skills import call_from_msg, end_goal, outcome_to_result
from conceptagent_ros.ros.futures import wait_done
from conceptagent_ros.ros.node_teardown import DestroysItsActions
from conceptagent_ros.ros.spin import run_node
from conceptagent_ros.scene.geometry import approach_pose
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome
from conceptagent_ros.srv import RecordSkillOutcome
from conceptagent_ros.world.floor_plan import Wall
from conceptagent_ros.world.robot_description import FOOTPRINT_RADIUS

POLL_SECONDS = 0.02
OUTCOME_WAIT_SECONDS = 2.0
Result = ExecuteSkill.Result


def navigation_goal(call: SkillCall, graph: SceneGraph | None, standoff: float, frame: str,
                    ground: ApproachGround | None = None) -> PoseStamped | str:
    """The pose to drive to for navigate_to(target), or why there is none. With `ground` (the map
    Nav2 navigates on, and the walls where a scene names them) an object is approached by the
    embedded navigator's rule (navigation/approach.py): a spot free for the base, joined to where the
    robot stands, with no wall between it and the object, tried round the object and further out.
    Without, by scene/geometry.approach_pose alone (on the line toward the robot, which can be behind
    a wall or inside furniture)."""
    if len(call.args) != 1:
        return f"{call}: navigate_to takes one target"
    if graph is None:
        return f"{call}: no scene graph received yet, so {call.args[0]} cannot be located"
    target = resolve_alias(graph, call.args[0])  # an id perception has since fused into another object
    robot = pose_position(graph.robot.pose)
    goal = PoseStamped()
    goal.header.frame_id = graph.header.frame_id or frame
    for obj in graph.objects:
        if obj.id == target:
            centre = pose_position(obj.pose)
            size = (obj.size.x, obj.size.y, obj.size.z)
            if ground is not None:
                try:
                    pose = approach_goal(ground.costmap, ground.walls, (centre[0], centre[1]), size,
                                         (robot[0], robot[1]), standoff, ground.reach).pose
                except NavigationError as e:
                    return f"{call}: {e}"
            else:
                pose = approach_pose((centre[0], centre[1]), size, (robot[0], robot[1]), standoff)
            goal.pose = pose_msg((pose.x, pose.y, 0.0), pose.yaw)
            return goal
    for room in graph.rooms:
        if room.id == target:
            goal.pose = pose_msg(((room.x_min + room.x_max) / 2, (room.y_min + room.y_max) / 2, 0.0))
            return goal
    return f"{call}: {target} is not in the scene graph"


@dataclass(frozen=True)
class ApproachGround:
    """What the approach rule stands on: the costmap of Nav2's map for this base, the walls (empty
    where no scene says where they are: occupied cells still keep the base off), the arm's reach."""

    costmap: Costmap
    walls: tuple[Wall, ...] = ()
    reach: float = 0.9


class RobotSkillsNode(DestroysItsActions, Node):
    __doc__ = __doc__

    def __init__(self, node_name: str = "robot_skills", namespace: str = "", navigator: NavigatorWorker | None = None,
                 **kwargs: object):
        super().__init__(node_name, namespace=namespace, **kwargs)
        d = ParameterDescriptor
        seconds = [FloatingPointRange(from_value=0.0, to_value=3600.0)]
        self.declare_parameter("scene_graph_topic", "scene_graph", d(description="SceneGraph topic"))
        self.declare_parameter("frame_id", "map", d(description="frame of navigation goals"))
        self.declare_parameter("navigation.enabled", True, d(description="serve navigate_to through Nav2"))
        self.declare_parameter("navigation.standoff", 0.35, d(description="metres between the base and the object's box"))
        self.declare_parameter("navigation.wait_active", True, d(description="wait until Nav2 is active"))
        self.declare_parameter("navigation.localizer", "amcl", d(description="localizer node Nav2 waits for"))
        self.declare_parameter("navigation.map_topic", "/map", d(
            description="Nav2's occupancy grid that approach poses must be free on ('' approach_pose alone)"))
        self.declare_parameter("navigation.scene", "", d(
            description="a scene YAML or built-in scene whose walls no approach pose may see through ('' none)"))
        self.declare_parameter("navigation.reach", 0.9, d(description="metres the arm reaches from the base's centre",
                                                          floating_point_range=[FloatingPointRange(
                                                              from_value=0.1, to_value=3.0)]))
        self.declare_parameter("forward_skills", ["pick", "place", "open", "close"],
                               d(description="skills forwarded to manipulation action servers"))
        self.declare_parameter("server_wait", 2.0, d(description="seconds to wait for a forwarded server",
                                                     floating_point_range=seconds))
        self.declare_parameter("outcomes_service", "record_skill_outcome",
                               d(description="RecordSkillOutcome service told of every skill's end ('' none)"))
        group = ReentrantCallbackGroup()
        self._graph: SceneGraph | None = None
        service = self.get_parameter("outcomes_service").value
        self._outcomes = self.create_client(RecordSkillOutcome, service, callback_group=group) if service else None
        self.create_subscription(SceneGraph, self.get_parameter("scene_graph_topic").value, self._on_graph,
                                 QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE), callback_group=group)
        self._ground: ApproachGround | None = None
        self._walls = self._scene_walls(self.get_parameter("navigation.scene").value)
        map_topic = self.get_parameter("navigation.map_topic").value
        if map_topic:  # map_server latches its map: transient local
            self.create_subscription(OccupancyGrid, map_topic, self._on_map,
                                     QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                                durability=DurabilityPolicy.TRANSIENT_LOCAL), callback_group=group)
        self.servers: list[ActionServer] = []
        self.navigator = navigator
        if self.get_parameter("navigation.enabled").value:
            if self.navigator is None:
                self.navigator = NavigatorWorker(self, namespace=self.get_namespace().strip("/"),
                                                 callback_group=group,
                                                 wait_active=self.get_parameter("navigation.wait_active").value,
                                                 localizer=self.get_parameter("navigation.localizer").value)
            self.servers.append(self._server("navigate_to", self._navigate, group))
        self.forward: dict[str, tuple[ActionClient, float]] = {}
        for skill in self.get_parameter("forward_skills").value:
            action = self.declare_parameter(f"forward.{skill}.action", f"manipulation/{skill}",
                                            d(description=f"manipulation server for {skill}")).value
            timeout = self.declare_parameter(f"forward.{skill}.timeout", 120.0,
                                             d(description=f"seconds {skill} may take", floating_point_range=seconds)).value
            self.forward[skill] = (ActionClient(self, ExecuteSkill, action, callback_group=group), timeout)
            self.servers.append(self._server(skill, lambda handle, s=skill: self._forward(handle, s), group))
        served = ["navigate_to"] * bool(self.navigator) + list(self.forward)
        self.get_logger().info(f"robot skills: {', '.join(served)}")

    def _server(self, skill: str, execute, group) -> ActionServer:  # noqa: ANN001
        return ActionServer(self, ExecuteSkill, f"skills/{skill}", execute_callback=execute,
                            goal_callback=lambda _g: GoalResponse.ACCEPT,
                            cancel_callback=lambda _h: CancelResponse.ACCEPT, callback_group=group)

    def _on_graph(self, msg: SceneGraph) -> None:
        self._graph = msg

    def _on_map(self, msg: OccupancyGrid) -> None:
        try:
            grid = occupancy_from_msg(msg)
        except ConceptAgentError as e:
            self.get_logger().error(f"the map on {self.get_parameter('navigation.map_topic').value} is not usable: {e}")
            return
        # the base's radius and 5 cm, as the embedded navigator plans (bodies/household/body.py)
        self._ground = ApproachGround(costmap(grid, FOOTPRINT_RADIUS + 0.05), self._walls,
                                      self.get_parameter("navigation.reach").value)

    @staticmethod
    def _scene_walls(scene: str) -> tuple[Wall, ...]:
        if not scene:
            return ()
        from conceptagent_ros.scene.loader import load_scene
        from conceptagent_ros.world.house import house

        return tuple(house(load_scene(scene)).plan.walls)

    def _tell_the_scene_graph(self, call_msg, success: bool) -> None:  # noqa: ANN001 - SkillCall msg
        """What the skill did goes to the scene graph before the planner hears of it, so every graph
        stamped after the result's `finished` knows it (what the gripper holds, what is open)."""
        if self._outcomes is None or not self._outcomes.service_is_ready():
            return
        future = self._outcomes.call_async(RecordSkillOutcome.Request(call=call_msg, success=success))
        reply = future.result() if wait_done(future, OUTCOME_WAIT_SECONDS) else None
        if reply is None or not reply.recorded:
            self.get_logger().warning(f"the scene graph did not record {call_msg.skill}: "
                                      f"{reply.message if reply is not None else 'no answer'}")

    def _end(self, goal_handle, outcome: SkillOutcome) -> ExecuteSkill.Result:  # noqa: ANN001
        result = outcome_to_result(outcome)
        self._tell_the_scene_graph(goal_handle.request.call, outcome.success)
        result.finished = self.get_clock().now().to_msg()
        end_goal(goal_handle, outcome)
        return result

    # -- navigation -----------------------------------------------------------------------------------
    def _navigate(self, goal_handle) -> ExecuteSkill.Result:  # noqa: ANN001
        call = call_from_msg(goal_handle.request.call)
        goal = navigation_goal(call, self._graph, self.get_parameter("navigation.standoff").value,
                               self.get_parameter("frame_id").value, self._ground)
        if isinstance(goal, str):
            return self._end(goal_handle, SkillOutcome(call, False, goal, "unknown_object"))
        goal.header.stamp = self.get_clock().now().to_msg()
        cancel = threading.Event()
        watcher = threading.Thread(target=self._watch_cancel, args=(goal_handle, cancel), daemon=True)
        watcher.start()

        def feedback(distance: float) -> None:
            goal_handle.publish_feedback(ExecuteSkill.Feedback(status=f"{distance:.2f} m to go", progress=0.0))

        try:
            assert self.navigator is not None
            result = self.navigator.navigate(goal, cancel, feedback)
        except NavigatorUnavailable as e:
            return self._end(goal_handle, SkillOutcome(call, False, str(e), "unavailable"))
        finally:
            cancel.set()
        if result.success:
            return self._end(goal_handle, SkillOutcome(call, True, f"{call} succeeded: {result.message}"))
        failure = "canceled" if result.canceled else "navigation"
        return self._end(goal_handle, SkillOutcome(call, False, f"{call} failed: {result.message}", failure))

    @staticmethod
    def _watch_cancel(goal_handle, cancel: threading.Event, finished: threading.Event | None = None) -> None:  # noqa: ANN001
        """Sets `cancel` when the goal's client asks to cancel it; ends with `finished` (or `cancel`)."""
        while not cancel.wait(POLL_SECONDS):
            if finished is not None and finished.is_set():
                return
            if goal_handle.is_cancel_requested:
                cancel.set()

    # -- forwarding -----------------------------------------------------------------------------------
    def _forward(self, goal_handle, skill: str) -> ExecuteSkill.Result:  # noqa: ANN001
        call = call_from_msg(goal_handle.request.call)
        client, timeout = self.forward[skill]
        if not client.wait_for_server(timeout_sec=self.get_parameter("server_wait").value):
            return self._end(goal_handle, SkillOutcome(
                call, False, f"{call} not executed: the manipulation server {client._action_name} is not running",
                "unavailable"))
        # the manipulation server is sent ids of the current graph (a fused-away id as what it joined)
        forwarded = SkillCallMsg(skill=call.skill, args=[resolve_alias(self._graph, a) for a in call.args])
        canceled, finished = threading.Event(), threading.Event()
        watcher = threading.Thread(target=self._watch_cancel, args=(goal_handle, canceled, finished), daemon=True)
        watcher.start()
        try:
            answer = client.send_goal_reliably(ExecuteSkill.Goal(call=forwarded),
                                               lambda m: goal_handle.publish_feedback(m.feedback),
                                               timeout=self.get_parameter("server_wait").value, cancel=canceled)
            if answer.handle is None:
                text = (f"{call} canceled before it started" if answer.why == "canceled" else
                        f"{call}: {client._action_name} refused the goal" if answer.why == "rejected" else
                        f"{call}: {client._action_name} did not answer the goal in time")
                return self._end(goal_handle, SkillOutcome(
                    call, False, text, "canceled" if answer.why == "canceled" else "unavailable"))
            handle = answer.handle
            ended = client.get_result_reliably(handle, timeout=timeout, cancel=canceled)
        finally:
            finished.set()
        if ended.response is None:
            if ended.why == "lost":
                return self._end(goal_handle, SkillOutcome(
                    call, False, f"{call}: {client._action_name} no longer knows the goal (it restarted while the "
                                 "skill ran); the skill's effect is unknown", "unavailable"))
            # Canceled by our own client, or over time: the manipulation server is asked to stop, and
            # given a moment to do so
            handle.cancel_goal_async()
            client.get_result_reliably(handle, timeout=1.0)
            canceled_by_client = goal_handle.is_cancel_requested
            text = (f"{call} canceled" if canceled_by_client else
                    f"{call} did not finish within {timeout:.0f} s and was canceled")
            return self._end(goal_handle, SkillOutcome(call, False, text, "canceled" if canceled_by_client else "timeout"))
        result = ended.response.result
        self._tell_the_scene_graph(goal_handle.request.call, result.success)
        result.finished = self.get_clock().now().to_msg()
        if result.success:
            goal_handle.succeed()
        elif goal_handle.is_cancel_requested and result.error_code == Result.CANCELED:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        return result

    def destroy_node(self) -> None:
        if self.navigator is not None:
            self.navigator.shutdown()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    run_node(RobotSkillsNode, threads=6, args=args)
