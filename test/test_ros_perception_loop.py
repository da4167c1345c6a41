"""The ROS graph with perception in the loop: the robot stand-in's synthetic camera publishes RGB-D
frames, the perception node fuses them into perceived_graph, the stand-in builds scene_graph from it
(with the robot's own state), and the planner completes tasks seeing only that (real rclpy)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ros_helpers import require_ros, wait_future

require_ros()

from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from conceptagent_ros.action import ExecuteTask  # noqa: E402
from conceptagent_ros.ros.bringup import GraphOptions, bring_up  # noqa: E402
from conceptagent_ros.scene.loader import load_scene  # noqa: E402


@pytest.mark.parametrize(("scene", "instruction", "done"), [
    ("studio_kitchen", "put the bread in the fridge", lambda w: w.scene.objects["bread_1"].parent == "fridge_1"),
    ("apartment", "put the book on the shelf", lambda w: w.scene.objects["book_1"].parent == "shelf_1"),
])
def test_the_planner_completes_tasks_seeing_through_the_perception_node(ros_context, tmp_path: Path, scene, instruction,
                                                                          done):
    import threading

    config = tmp_path / "perception.yaml"
    config.write_text(yaml.safe_dump({"detector": {"kind": "sim_paint"}, "segmenter": {"kind": "box"},
                                      "embedder": {"kind": "none"}}))
    categories = sorted({o.category for o in load_scene(scene).objects.values()})
    graph = bring_up(GraphOptions(robot={"scene": scene, "perception": "camera"},
                                  perception={"config": str(config), "vocabulary": categories}), context=ros_context)
    client_node = Node("test_client", context=ros_context)
    executor = MultiThreadedExecutor(num_threads=2, context=ros_context)
    executor.add_node(client_node)
    threading.Thread(target=executor.spin, daemon=True).start()
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
        executor.shutdown(timeout_sec=1.0)
        client_node.destroy_node()
        graph.shutdown()

