"""The ROS graph in one process -- robot stand-in and planner node on one multi-threaded executor --
for pip installs, where launch_ros is not available, and for tests and benchmarks.

    graph = bring_up(GraphOptions(scene="apartment"))   # spins on a background thread
    ...
    graph.shutdown()
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import rclpy
from rclpy.context import Context
from rclpy.node import Node
from rclpy.parameter import Parameter

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.ros.planner_node import PlannerNode
from conceptagent_ros.ros.robot_standin_node import RobotStandInNode
from conceptagent_ros.ros.spin import init_context, make_executor
from conceptagent_ros.ros.spin_threads import SpinThread

NAMESPACE = "conceptagent"


@dataclass
class GraphOptions:
    namespace: str = NAMESPACE
    params_file: str | None = None  # ROS params YAML (node name, then ros__parameters)
    planner: Mapping[str, Any] = field(default_factory=dict)  # parameter overrides of the planner node
    robot: Mapping[str, Any] = field(default_factory=dict)  # of the robot stand-in
    with_robot: bool = True
    with_planner: bool = True
    # The perception node (configured and activated here) with these parameter overrides; None: none.
    # With the stand-in's perception=camera it closes the loop: camera frames -> perceived_graph -> scene_graph.
    perception: Mapping[str, Any] | None = None
    # The scene graph node (ros/scene_graph_node.py) with these overrides; None: none, except where the
    # stand-in's perception=camera needs it (then with the stand-in's scene as its map): it builds
    # scene_graph from perceived_graph, the pose and the skills' outcomes, as on a real robot.
    scene_graph: Mapping[str, Any] | None = None
    threads: int = 4
    # The manipulation node (ros/manipulation_node.py) with these overrides; None: none. As the whole
    # robot of a table-top arm (with_robot False): action_prefix "skills", publish_scene_graph true.
    manipulation: Mapping[str, Any] | None = None

    def body_sees_through_perception(self) -> bool:
        """The manipulation node's household body sends its camera's images to the perception node."""
        return self.manipulation is not None and self.manipulation.get("perception") == "camera"

    def scene_graph_node(self) -> Mapping[str, Any] | None:
        """The scene graph node's overrides, or None for no node."""
        if self.scene_graph is None and self.with_robot and self.robot.get("perception") == "camera":
            return {"map": self.robot.get("scene", "studio_kitchen")}
        if self.scene_graph is None and self.body_sees_through_perception():
            assert self.manipulation is not None
            # reach as the arm has it: to the nearest point of a thing, from the base
            return {"map": self.manipulation.get("scene", "studio_kitchen"), "reach_to": "edge"}
        return self.scene_graph

    def perception_node(self) -> Mapping[str, Any] | None:
        """The perception node's overrides, or None for no node: the body's camera needs one."""
        if self.perception is None and self.body_sees_through_perception():
            from conceptagent_ros.paths import config_dir

            return {"config": str(config_dir() / "perception_simulated.yaml")}
        return self.perception


def body_options(scene: str, perception: str = "camera", sensing: str | None = None) -> dict[str, Any]:
    """The manipulation node's overrides that make a physical body in PyBullet the whole robot
    (`--body pybullet`): conceptagent_mm in a household scene's exported world, serving every skill
    of the library, its camera's images to the perception node (perception camera; GraphOptions then
    brings up the perception and scene graph nodes) or its own view as scene_graph (perception body);
    the Panda on its table elsewhere, serving the arm's five, publishing what its cameras see.
    `sensing`: the body's senses (None: its own; bodies/sensing.py)."""
    from conceptagent_ros.bodies.traits import physical_body_traits
    from conceptagent_ros.scene.loader import load_scene

    if perception not in ("camera", "body"):
        raise ConceptAgentError(f"the body's perception is camera or body, not {perception!r}")
    traits = physical_body_traits(load_scene(scene))
    options: dict[str, Any] = {"scene": scene, "action_prefix": "skills", "skills": list(traits.skills()),
                               "frame_id": "map", "publish_scene_graph": True}
    if traits.mobile:  # its camera's images go to perception, or its own view is the scene graph
        options.update(perception=perception, publish_scene_graph=perception == "body")
    if sensing is not None:
        options["sensing"] = sensing
    return options


def overrides(values: Mapping[str, Any]) -> list[Parameter]:
    return [Parameter(name, value=value) for name, value in values.items()]


@dataclass
class RosGraph:
    context: Context
    nodes: dict[str, Node]
    threads: list[SpinThread]  # each spins one node's executor (thread.executor)
    owns_context: bool

    def alive(self) -> bool:
        return all(t.is_alive() for t in self.threads)

    def shutdown(self) -> None:
        # A running task first: its thread sits in an executor callback and talks to the robot
        # through clients that are about to be destroyed. Canceled now, it ends its goal (the
        # client hears "canceled") and asks the robot to stop the skill while all is still up.
        planner = self.nodes.get("planner")
        if isinstance(planner, PlannerNode):
            planner.stop_tasks()
        # Threads out of rclpy next (and their executors shut down), then nodes, then the context:
        # another order aborts at exit.
        for thread in self.threads:
            thread.stop(timeout=5.0)
        for node in self.nodes.values():
            node.destroy_node()
        if self.owns_context:
            rclpy.try_shutdown(context=self.context)


def bring_up(options: GraphOptions, context: Context | None = None, domain_id: int | None = None) -> RosGraph:
    """Create the nodes and spin them on a background thread; the caller owns the returned graph."""
    owns = context is None
    if context is None:
        args = ["--ros-args", "--params-file", options.params_file] if options.params_file else []
        context = init_context(domain_id, args)
    nodes: dict[str, Node] = {}
    try:
        if options.with_robot:
            nodes["robot"] = RobotStandInNode(namespace=options.namespace, context=context,
                                              parameter_overrides=overrides(options.robot))
        if options.with_planner:
            nodes["planner"] = PlannerNode(namespace=options.namespace, context=context,
                                           parameter_overrides=overrides(options.planner))
        perception_overrides = options.perception_node()
        if perception_overrides is not None:
            from rclpy.lifecycle import TransitionCallbackReturn

            from conceptagent_ros.ros.perception_node import PerceptionNode

            perception = PerceptionNode(namespace=options.namespace, context=context,
                                        parameter_overrides=overrides(perception_overrides))
            nodes["perception"] = perception
            if perception.trigger_configure() != TransitionCallbackReturn.SUCCESS:
                raise ConceptAgentError("the perception node could not load its models (see its log)")
            perception.trigger_activate()
        if options.manipulation is not None:
            from conceptagent_ros.ros.manipulation_node import ManipulationNode

            nodes["manipulation"] = ManipulationNode(namespace=options.namespace, context=context,
                                                     parameter_overrides=overrides(options.manipulation))
        scene_graph = options.scene_graph_node()
        if scene_graph is not None:
            from conceptagent_ros.ros.scene_graph_node import SceneGraphNode

            nodes["scene_graph"] = SceneGraphNode(namespace=options.namespace, context=context,
                                                  parameter_overrides=overrides(scene_graph))
    except Exception:
        for node in nodes.values():
            node.destroy_node()
        if owns:
            rclpy.try_shutdown(context=context)
        raise
    # One executor per node: rclpy's executors rebuild their wait set from every entity of their
    # nodes on each wake-up, so two small executors answer faster than one large one.
    threads = []
    for name, node in nodes.items():
        # The stand-in and the scene graph node never block in a callback: single-threaded. A
        # multi-threaded executor's threads would only contend for the GIL with perception's fusion
        # (measured: twice the perception node's time per frame with the scene graph node on 4 threads).
        executor = make_executor(1 if name in ("robot", "scene_graph") else options.threads, context)
        executor.add_node(node)
        thread = SpinThread(executor, f"conceptagent-{name}")
        thread.start()
        threads.append(thread)
    return RosGraph(context, nodes, threads, owns)
