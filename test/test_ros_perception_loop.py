"""The ROS graph with perception in the loop: the robot stand-in's synthetic camera publishes RGB-D
frames, the perception node fuses them into perceived_graph, the scene graph node builds scene_graph
from it (with the robot's pose and its skills' outcomes), and the planner completes tasks seeing
only that (real rclpy)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ros_helpers import Spinning, require_ros, wait_future

require_ros()

from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from conceptagent_ros.action import ExecuteTask  # noqa: E402
from conceptagent_ros.ros.bringup import GraphOptions, bring_up  # noqa: E402
from conceptagent_ros.scene.loader import load_scene  # noqa: E402


@pytest.mark.parametrize(("scene", "instruction", "done"), [
    ("studio_kitchen", "put the bread in the fridge", lambda w: w.scene.objects["bread_1"].parent == "fridge_1"),
    # "a book", "a shelf": the apartment has two of each, and "the book" that does not say which is refused
    ("apartment", "put a book on a shelf",
     lambda w: any(o.category == "book" and o.parent and w.scene.objects[o.parent].category == "shelf"
                   for o in w.scene.objects.values())),
])
def test_the_planner_completes_tasks_seeing_through_the_perception_node(ros_context, tmp_path: Path, scene, instruction,
                                                                          done):
    config = tmp_path / "perception.yaml"
    config.write_text(yaml.safe_dump({"detector": {"kind": "sim_paint"}, "segmenter": {"kind": "box"},
                                      "embedder": {"kind": "none"}}))
    categories = sorted({o.category for o in load_scene(scene).objects.values()})
    graph = bring_up(GraphOptions(robot={"scene": scene, "perception": "camera"},
                                  perception={"config": str(config), "vocabulary": categories}), context=ros_context)
    client_node = Node("test_client", context=ros_context)
    executor = MultiThreadedExecutor(num_threads=2, context=ros_context)
    executor.add_node(client_node)
    spinning = Spinning(executor)
    try:
        tasks = ActionClient(client_node, ExecuteTask, "/conceptagent/execute_task")
        assert tasks.wait_for_server(timeout_sec=30.0)
        handle = wait_future(tasks.send_goal_async(ExecuteTask.Goal(instruction=instruction)), 30.0)
        assert handle.accepted
        result = wait_future(handle.get_result_async(), 240.0).result
        robot = graph.nodes["robot"]
        assert result.success, f"{result.error_msg} (unmet {list(result.unmet)}, {result.steps} steps)"
        assert done(robot.world), "the planner reported success but the world disagrees"
        perception = graph.nodes["perception"]
        assert perception.frames >= 16, "the planner cannot have seen through the camera"
        # what the planner was told came from the perception node: its ids and boxes
        assert robot.perceived is not None and len(robot.perceived.objects) >= 5
    finally:
        spinning.stop()
        client_node.destroy_node()
        graph.shutdown()



class IndependentJudge:
    """Each task judged on the stand-in's world by test/pddl_judge.py; the runner's own verdict
    (ros/bench/graph_suite.judge_on_world) is recorded beside it and must agree."""

    def __init__(self) -> None:
        self.disagreements: list[str] = []

    def __call__(self, world, goal: str) -> tuple[bool, list[str]]:  # noqa: ANN001 - World
        from pddl_judge import goal_holds

        from conceptagent_ros.ros.bench.graph_suite import judge_on_world

        truth = world.state()
        verdict = goal_holds(goal, truth.atoms, truth.types)
        ours, unmet = judge_on_world(world, goal)
        if ours != verdict:
            self.disagreements.append(f"{goal}: judge {verdict}, runner {ours}")
        return verdict, unmet


# easy_04 failed once in CI (the planner placed the sponge from the sink, 1.5 m from the bowl: it
# believed itself within reach) and easy_24 below twice (a sink of the wrong room): under load the
# graph after a drive could carry the pose from before it (the localiser's pose comes on its own
# topic), and a task's first graph could be the last task's. Both are closed at their cause (the
# scene graph node holds a graph for a pose stamped after the skill's record or the reset; the
# planner's first graph is stamped after the task began), with tests of their own
# (test_scene_graph_node.py, test_ros_robot_link.py); a failure prints what the stand-in ran.
def test_the_easy_suite_completes_through_the_ros_graph_with_the_perception_node() -> None:
    """Every third easy task (ten, over the three scenes) as a user sends it: the stand-in reset to
    the task's scene over its service, the perception node's map cleared over perception/reset, the
    task's instruction and goal (over object ids the planner has not seen yet) as an ExecuteTask
    goal. The planner sees only what the perception node fused from the camera. The whole suite is
    `conceptagent ros suite --suite easy` (docs/benchmarks/perception.md): a third of it here keeps
    `make test` within CI's 30 minutes."""
    from conceptagent_ros.evaluation.tasks import load_suite
    from conceptagent_ros.ros.bench.graph_suite import GraphSuiteConfig, run_graph_suite

    judge = IndependentJudge()
    tasks = load_suite("easy")[::3]
    assert {t.scene for t in tasks} == {"studio_kitchen", "apartment", "family_house"}
    episodes = run_graph_suite(tasks, GraphSuiteConfig(perception="camera", detector="oracle"), judge=judge)
    assert not judge.disagreements
    failed = [f"{e.task_id}: {e.error or e.unmet}" for e in episodes if not e.success]
    assert not failed, f"{len(tasks) - len(failed)}/{len(tasks)}; failed {failed}"
    assert all(e.frames >= 16 for e in episodes), "every task was seen through at least one look around"


def test_the_real_robot_layout_completes_tasks_in_every_scene() -> None:
    """As on a robot: the stand-in is only camera, pose and skills; the scene graph node builds the
    planner's scene_graph from perceived_graph, the robot's pose and the skills' outcomes (a pillow
    carried to the bed in another room, a towel to a sink two rooms away). The whole suite in this
    layout is `conceptagent ros suite` (docs/benchmarks/perception.md)."""
    from conceptagent_ros.evaluation.tasks import load_suite
    from conceptagent_ros.ros.bench.graph_suite import GraphSuiteConfig, run_graph_suite

    judge = IndependentJudge()
    tasks = [t for t in load_suite("easy") if t.id in ("easy_02", "easy_15", "easy_24")]
    assert {t.scene for t in tasks} == {"studio_kitchen", "apartment", "family_house"}
    episodes = run_graph_suite(tasks, GraphSuiteConfig(perception="camera"), judge=judge)
    assert not judge.disagreements
    failed = [f"{e.task_id}: {e.error or e.unmet}" for e in episodes if not e.success]
    assert not failed, failed


def test_a_skill_may_name_an_id_the_map_has_since_fused_away(ros_context) -> None:
    """Perception saw the fridge twice before it fused the views (fridge_2 into fridge_1): a planner
    that took fridge_2 from an earlier graph still drives to that fridge, not into an unknown id."""
    from rclpy.parameter import Parameter

    from conceptagent_ros.msg import SceneGraph
    from conceptagent_ros.msg import SceneObject as SceneObjectMsg
    from conceptagent_ros.ros.robot_standin_node import RobotStandInNode
    from conceptagent_ros.skills.contract import SkillCall

    node = RobotStandInNode(namespace="fused", context=ros_context,
                            parameter_overrides=[Parameter("scene", value="apartment"),
                                                 Parameter("perception", value="camera")])
    try:
        fridge = node.world.scene.objects["fridge_1"]
        box = node.camera.boxes["fridge_1"]

        def graph(*ids: str) -> SceneGraph:
            msg = SceneGraph()
            for oid in ids:
                o = SceneObjectMsg(id=oid, label="fridge")
                o.pose.position.x, o.pose.position.y, o.pose.position.z = box.center
                o.size.z = float(box.size[2])
                msg.objects.append(o)
            return msg

        node.camera.on_perceived(graph("fridge_1", "fridge_2"))
        node.camera.on_perceived(graph("fridge_1"))  # fused
        outcome = node._apply(SkillCall("navigate_to", ("fridge_2",)))
        assert outcome.success, outcome.message
        assert node.world.robot.room == fridge.room
    finally:
        node.destroy_node()
