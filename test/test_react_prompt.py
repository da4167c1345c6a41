"""ReAct's request tells the model what is left of the goal, in the words of a task: which object
goes where, that a named object has not been seen yet, and that done() is due once the goal holds.
The expected lines are written out here, not built with the code under test."""
from __future__ import annotations

from recording_proposer import Recording

from conceptagent_ros.evaluation.episode import embedded_task_map
from conceptagent_ros.planning.prompts import react_messages
from conceptagent_ros.planning.task import TaskRequest, prepare_task, run_task
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall


def still_to_do(scene: str, goal: str, calls: list[SkillCall]) -> list[str]:
    """The "Still to do:" line of the ReAct request at each decision of a run that makes `calls`."""
    world = World(load_scene(scene))
    task = prepare_task(TaskRequest("do it", goal=goal, planner="react", max_steps=len(calls) + 1),
                        embedded_task_map(world))
    proposer = Recording(calls)
    task.built.proposer = proposer
    run_task(task, world, world.robot)
    lines = []
    for context in proposer.contexts:
        user = react_messages(context)[-1].content
        (line,) = [x for x in user.splitlines() if x.startswith("Still to do:")]
        lines.append(line.removeprefix("Still to do: "))
    return lines


def test_the_goal_left_is_a_placement_in_words_until_it_holds_then_done_is_due():
    calls = [SkillCall("navigate_to", ("apple_1",)), SkillCall("pick", ("apple_1",)),
             SkillCall("navigate_to", ("dining_table_1",)), SkillCall("place", ("apple_1", "dining_table_1"))]
    lines = still_to_do("studio_kitchen", "(in apple_1 dining_table_1)", calls)
    assert lines[:4] == ["put apple_1 in/on dining_table_1"] * 4
    assert lines[4] == "nothing: the goal holds, call done()"


def test_a_goal_over_a_kind_names_the_kind():
    lines = still_to_do("studio_kitchen", "(exists (?c - countertop) (in cup_1 ?c))", [])  # on the dining table
    assert lines[0] == "put cup_1 in/on any countertop"


def test_an_object_the_robot_has_not_seen_is_said_to_be_unseen():
    # the apartment's garbage can stands in the kitchen; the robot starts in the living room
    lines = still_to_do("apartment", "(in newspaper_1 garbage_can_1)", [])
    assert lines[0].startswith("put newspaper_1 in/on garbage_can_1 (garbage_can_1 not observed yet")


def test_a_goal_that_is_not_a_placement_stays_pddl():
    lines = still_to_do("studio_kitchen", "(open fridge_1)", [])
    assert lines[0] == "(open fridge_1)"
