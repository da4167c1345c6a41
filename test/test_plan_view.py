"""Plan views: what MCTS, Tree-Planner and LLM-Planner intend, as a tree for rviz."""
from __future__ import annotations

import pytest

from conceptagent_ros.evaluation.episode import embedded_task_map
from conceptagent_ros.planning.plan_view import MAX_CHILDREN, MAX_DEPTH, PlanNode, chain, plan_view_of
from conceptagent_ros.planning.task import TaskRequest, prepare_task, run_task
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World


def views_during(planner: str, llm: str = "simulated:0.2", steps: int = 3) -> list[PlanNode | None]:
    world = World(load_scene("studio_kitchen"))
    task = prepare_task(TaskRequest("put the apple in the fridge", planner=planner, llm=llm, max_steps=steps, task_id="v"),
                        embedded_task_map(world))
    views: list[PlanNode | None] = []
    run_task(task, world, world.robot, on_step=lambda _r: views.append(plan_view_of(task.built.proposer)))
    return views


def walk(node: PlanNode, depth: int = 0):
    yield node, depth
    for child in node.children:
        yield from walk(child, depth + 1)


def test_mcts_view_is_its_search_tree_with_the_most_visited_path_chosen():
    view = views_during("mcts:expansions=5")[0]
    assert view is not None and view.label == "now" and view.children
    for node, depth in walk(view):
        assert depth <= MAX_DEPTH and len(node.children) <= MAX_CHILDREN
        chosen = [c for c in node.children if c.chosen]
        if node.chosen and node.children:
            assert len(chosen) == 1 and chosen[0].visits == max(c.visits for c in node.children)
        if not node.chosen:
            assert not chosen  # the chosen path is one path from the root
    assert sum(c.visits for c in view.children) <= view.visits


def test_tree_planner_view_counts_the_sampled_plans():
    view = views_during("tree-planner:samples=6")[0]
    assert view is not None and view.children
    assert 1 <= sum(c.visits for c in view.children) <= 6  # support: sampled plans through each child
    assert all("(" in c.label for c in view.children)


def test_llm_planner_view_is_the_rest_of_its_plan():
    view = views_during("llm-planner", llm="offline")[0]
    assert view is not None
    labels = [n.label for n, _ in walk(view)]
    assert labels[0] == "now" and len(labels) >= 2 and all(n.chosen for n, _ in walk(view))


def test_react_keeps_no_lookahead():
    assert views_during("react", llm="offline", steps=1) == [None]


def test_chain():
    view = chain(["a()", "b()"])
    assert [n.label for n, _ in walk(view)] == ["now", "a()", "b()"]


def test_plan_tree_markers_draw_every_node_and_edge():
    pytest.importorskip("visualization_msgs.msg")
    from builtin_interfaces.msg import Time

    from conceptagent_ros.ros.conversions.markers import plan_markers
    from conceptagent_ros.scene.model import RobotState

    view = PlanNode("now", True, 5, None, True, (PlanNode("a()", True, 3, 0.7), PlanNode("b()", False, 2, 0.4, False)))
    array = plan_markers(["put the apple in the fridge"], RobotState((1.0, 2.0, 0.0), "k"), Time(), view=view)
    by_ns: dict[str, list] = {}
    for m in array.markers:
        by_ns.setdefault(m.ns, []).append(m)
    assert len(by_ns["plan_tree"]) == 3 and len(by_ns["plan_tree_labels"]) == 3
    assert len(by_ns["plan_tree_edges"][0].points) == 4  # two edges
    labels = {m.text for m in by_ns["plan_tree_labels"]}
    assert {"a() n=3 v=0.70", "b() n=2 v=0.40"} <= labels
