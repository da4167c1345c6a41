"""Instructions phrased as a new user would, without --goal, on the offline backend: the translator
turns them into the right goal (never a wrong one) and the robot reaches it in the world."""
from __future__ import annotations

import re

import pytest

from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode

CASES = [
    ("toss the newspaper into the garbage can", "apartment", "newspaper", "garbage_can"),
    ("put the wine in the fridge", "family_house", "wine_bottle", "fridge"),
    ("bring the cup from the dining table to the sink", "studio_kitchen", "cup", "sink"),
    ("stash the apple in the fridge", "studio_kitchen", "apple", "fridge"),
    ("take the mug out of the cabinet and put it in the sink", "studio_kitchen", "mug", "sink"),
    # "it" is what was picked up; "on the stove" says where the pan is, not where the potato goes
    ("The agent should pick up the potato on the counter and place it in the pan on the stove.", "studio_kitchen",
     "potato", "pan"),
    ("pick up the bowl that is on the counter and put it in the sink", "studio_kitchen", "bowl", "sink"),
]


@pytest.mark.parametrize("instruction, scene, thing, place", CASES, ids=[c[0] for c in CASES])
def test_free_text_instruction_reaches_the_right_goal(instruction, scene, thing, place):
    result = run_episode(EpisodeSpec.of(instruction, scene=scene, max_steps=60))
    # the thing and the place, each as a typed variable or as the one object the words picked out
    for kind in (thing, place):
        assert re.search(rf"(- {kind}\b|\b{kind}_\d+\b)", result.goal), (kind, result.goal)
    assert "(in " in result.goal
    assert result.success, (result.goal, result.stats.stop_reason)


def test_the_source_is_not_taken_for_the_destination():
    result = run_episode(EpisodeSpec.of("bring the cup from the dining table to the sink", max_steps=60))
    assert "dining_table" not in result.goal


def test_llm_translates_what_the_grammar_does_not_and_gets_feedback_once(chat_server, monkeypatch):
    from conceptagent_ros.evaluation.episode import embedded_task_map
    from conceptagent_ros.planning.task import TaskRequest, prepare_task
    from conceptagent_ros.scene.loader import load_scene
    from conceptagent_ros.sim.world import World

    server = chat_server(['Sure! {"goal": "(exists (?a - apple) (frosty ?a))"}',
                          '{"goal": "(exists (?a - apple) (cold ?a))"}'])
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    world = World(load_scene("studio_kitchen"))
    task = prepare_task(TaskRequest("make sure the apple ends up nice and frosty", llm="openai:test-model"),
                        embedded_task_map(world))
    assert task.goal.text == "(exists (?a - apple) (cold ?a))"
    assert len(server.requests) == 2
    first, second = (r["messages"] for r in server.requests)
    assert "(cold ?x)" in first[0]["content"] and "fridge_1 (fridge)" in first[0]["content"]
    assert "could not be used" in second[1]["content"] and "frosty" in second[1]["content"]


def test_a_second_bad_goal_is_a_clear_error(chat_server, monkeypatch, capsys):
    from conceptagent_ros.cli import main

    server = chat_server(['{"goal": "(in apple_99 fridge_1)"}', "no json here at all"])
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    code = main(["run", "make sure the apple ends up nice and frosty", "--llm", "openai:test-model"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "no usable goal" in err and "pass a PDDL goal" in err
    assert "apple_99" in server.requests[1]["messages"][1]["content"]  # the unknown object was fed back


def test_a_robot_that_has_not_looked_yet_takes_goals_naming_ids_its_perception_will_give():
    """The ROS planner node knows only what it has seen; a task file names apple_1 before the camera
    has found it. Such an id is typed by its name where the name says a category of the vocabulary;
    anything else stays an unknown object, and the embedded world (which knows all) refuses it."""
    from conceptagent_ros.errors import TaskFileError
    from conceptagent_ros.planning.task import TaskMap, TaskRequest, prepare_task
    from conceptagent_ros.scene.loader import load_scene

    rooms = load_scene("studio_kitchen").rooms
    vocabulary = frozenset({"apple", "fridge", "coffee_table", "cup"})
    unseen = TaskMap(rooms, vocabulary, {"fridge_1": "fridge"}, unseen_ids_by_name=True)
    goal = "(and (in apple_2 fridge_1) (exists (?c - cup) (in ?c coffee_table_1)))"
    task = prepare_task(TaskRequest("put the apple in the fridge", goal=goal), unseen)
    assert task.goal.objects == {"apple_2", "fridge_1", "coffee_table_1"}
    assert unseen.goal_types(goal)["coffee_table_1"] == "coffee_table" and "c" not in unseen.goal_types(goal)
    for bad in ("(in widget_1 fridge_1)", "(in apple fridge_1)"):  # no such category; no counter
        with pytest.raises(TaskFileError, match="does not parse"):
            prepare_task(TaskRequest("put it in the fridge", goal=bad), unseen)
    knows_all = TaskMap(rooms, vocabulary, {"fridge_1": "fridge", "apple_1": "apple"})
    with pytest.raises(TaskFileError, match="does not parse"):
        prepare_task(TaskRequest("put the apple in the fridge", goal="(in apple_2 fridge_1)"), knows_all)
