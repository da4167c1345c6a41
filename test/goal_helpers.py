"""The no-model translator's goal for an instruction on a scene, and a judge of what it means: the
expected goal, written by hand, compared by meaning on the scene (goal_equivalence.py), where a
constant and a variable of a kind with one member are one goal."""
from __future__ import annotations

from conceptagent_ros.evaluation.episode import embedded_task_map
from conceptagent_ros.evaluation.goal_equivalence import same_goal
from conceptagent_ros.planning.task import TaskRequest, prepare_task
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World


def translated(scene: str, instruction: str):  # noqa: ANN201 - (Goal, Goal -> bool)
    world = World(load_scene(scene))
    task_map = embedded_task_map(world)
    goal = prepare_task(TaskRequest(instruction), task_map).goal

    def means(expected: str) -> bool:
        wanted = prepare_task(TaskRequest(instruction, goal=expected), task_map).goal
        return same_goal(goal, wanted, world.state().types).same

    return goal, means
