"""ReAct's request tells the model what is left of the goal, in the words of a task: which object
goes where, that a named object has not been seen yet, and that done() is due once the goal holds.
The expected lines are written out here, not built with the code under test."""
from __future__ import annotations

from recording_proposer import Recording

from conceptagent_ros.evaluation.episode import embedded_task_map
from conceptagent_ros.planning.prompts import critic_messages, expand_messages, react_messages
from conceptagent_ros.planning.proposal import DecisionContext
from conceptagent_ros.planning.task import TaskRequest, prepare_task, run_task
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall


def decisions(scene: str, goal: str, calls: list[SkillCall]) -> list[DecisionContext]:
    """What the agent knew at each decision of a run that makes `calls` in the embedded world."""
    world = World(load_scene(scene))
    task = prepare_task(TaskRequest("do it", goal=goal, planner="react", max_steps=len(calls) + 1),
                        embedded_task_map(world))
    proposer = Recording(calls)
    task.built.proposer = proposer
    run_task(task, world, world.robot)
    return proposer.contexts


def still_to_do(scene: str, goal: str, calls: list[SkillCall], line: str = "Still to do: ") -> list[str]:
    """The "Still to do:" line (or another) of the ReAct request at each decision of a run that makes `calls`."""
    lines = []
    for context in decisions(scene, goal, calls):
        user = react_messages(context)[-1].content
        (text,) = [x for x in user.splitlines() if x.startswith(line)]
        lines.append(text.removeprefix(line))
    return lines


def test_the_goal_left_is_a_placement_in_words_its_two_steps_until_the_object_is_held_then_done_is_due():
    calls = [SkillCall("navigate_to", ("apple_1",)), SkillCall("pick", ("apple_1",)),
             SkillCall("navigate_to", ("dining_table_1",)), SkillCall("place", ("apple_1", "dining_table_1"))]
    lines = still_to_do("studio_kitchen", "(in apple_1 dining_table_1)", calls)
    assert lines[:2] == ["1. pick up apple_1 2. put it in/on dining_table_1"] * 2
    assert lines[2:4] == ["put apple_1 in/on dining_table_1"] * 2
    assert lines[4] == "nothing: the goal holds, call done()"


def test_a_goal_over_a_kind_names_the_kind_and_the_few_things_of_it_seen():
    lines = still_to_do("studio_kitchen", "(exists (?c - countertop) (in cup_1 ?c))", [])  # on the dining table
    assert lines[0] == "1. pick up cup_1 2. put it in/on any countertop (countertop_1, countertop_2)"


def test_a_kind_with_one_thing_seen_is_said_as_that_thing():
    # `conceptagent run "put the apple in the fridge"` reads the instruction as this goal
    goal = "(exists (?a0 - apple ?f1 - fridge) (in ?a0 ?f1))"
    calls = [SkillCall("navigate_to", ("apple_1",)), SkillCall("pick", ("apple_1",))]
    assert still_to_do("studio_kitchen", goal, calls) == [
        "1. pick up apple_1 2. put it in/on fridge_1", "1. pick up apple_1 2. put it in/on fridge_1",
        "put apple_1 in/on fridge_1"]
    assert still_to_do("studio_kitchen", goal, calls, line="Now: ")[2] == "apple_1 is held; fridge_1 is closed, not within reach."


def test_a_kind_with_nothing_of_it_seen_is_to_be_looked_for():
    lines = still_to_do("apartment", "(exists (?m - mug ?s - sink) (in ?m ?s))", [])  # both in the kitchen
    assert lines[0] == ("1. pick up any mug 2. put it in/on any sink (any mug, any sink not observed yet: look for "
                        "them in the rooms not visited (bedroom_1, kitchen_1) or in closed containers)")


def test_an_object_the_robot_has_not_seen_is_said_to_be_unseen():
    # the apartment's garbage can stands in the kitchen; the robot starts in the living room
    lines = still_to_do("apartment", "(in newspaper_1 garbage_can_1)", [])
    assert lines[0] == ("1. pick up newspaper_1 2. put it in/on garbage_can_1 (garbage_can_1 not observed yet: look for "
                        "it in the rooms not visited (bedroom_1, kitchen_1) or in closed containers)")


def test_beside_the_goal_stand_where_its_object_is_whether_it_is_within_reach_and_what_the_hand_holds():
    # where the object goes is said once the object is held (before, the 1.5B model drove there first)
    calls = [SkillCall("navigate_to", ("apple_1",)), SkillCall("pick", ("apple_1",)),
             SkillCall("navigate_to", ("dining_table_1",))]
    lines = still_to_do("studio_kitchen", "(in apple_1 dining_table_1)", calls, line="Now: ")
    assert lines == [
        "apple_1 is in/on countertop_1, not within reach; the hand is empty.",
        "apple_1 is in/on countertop_1, within reach; the hand is empty.",
        "apple_1 is held; dining_table_1 is not within reach.",
        "apple_1 is held; dining_table_1 is within reach.",
    ]
    unseen = still_to_do("apartment", "(in newspaper_1 garbage_can_1)", [], line="Now: ")
    assert unseen == ["newspaper_1 is in/on coffee_table_1, within reach; the hand is empty."]  # beside the sofa


def test_a_goal_that_is_not_a_placement_stays_pddl():
    lines = still_to_do("studio_kitchen", "(open fridge_1)", [])
    assert lines[0] == "(open fridge_1)"


def test_the_steps_so_far_leave_out_what_came_into_view_which_the_observation_lists():
    class Prompted(Recording):
        def propose(self, context):
            self.prompts = [*getattr(self, "prompts", []), react_messages(context)[-1].content.splitlines()]
            return super().propose(context)

    world = World(load_scene("apartment"))
    task = prepare_task(TaskRequest("do it", goal="(in mug_1 sink_1)", planner="react", max_steps=2),
                        embedded_task_map(world))
    proposer = Prompted([SkillCall("navigate_to", ("kitchen_1",))])
    task.built.proposer = proposer
    run_task(task, world, world.robot)
    after = proposer.prompts[1]
    assert [line for line in after if line.startswith("1. ")] == [
        "1. navigate_to(kitchen_1) -> navigate_to(kitchen_1) succeeded"]
    assert "  - mug_1: mug (in/on countertop_2; dirty)" in after
    # the step's record still says it, for the trace and the ROS feedback
    said = proposer.contexts[1].history[0].said()
    assert said.startswith("navigate_to(kitchen_1) succeeded; newly observed: ") and "mug_1" in said


def test_the_critic_is_told_what_a_plan_would_leave_to_do_when_its_outcome_is_predicted():
    calls = [SkillCall("navigate_to", ("apple_1",)), SkillCall("pick", ("apple_1",)),
             SkillCall("navigate_to", ("dining_table_1",)), SkillCall("place", ("apple_1", "dining_table_1"))]
    contexts = decisions("studio_kitchen", "(in apple_1 dining_table_1)", calls)
    after = "Still to do after the planned sequence (predicted from the skills' effects): "

    def told(predicted_at: int | None) -> list[str]:
        predicted = contexts[predicted_at].state if predicted_at is not None else None
        user = critic_messages(contexts[0], calls[:2], predicted)[-1].content
        return [x.removeprefix(after) for x in user.splitlines() if x.startswith(after)]

    # the states the embedded world reached stand in for predictions: after the pick, after the place
    assert told(2) == ["put apple_1 in/on dining_table_1"]
    assert told(4) == ["nothing: the goal holds, call done()"]
    assert told(None) == []  # nothing predicted (grounding off): nothing said


def test_mcts_expansion_is_asked_with_reacts_rules_and_worked_examples():
    # on the 1.5B model, asked without them, the expansion listed drives first beside the apple it was sent for
    context = decisions("studio_kitchen", "(in apple_1 dining_table_1)", [])[0]
    react_system, react_user = (m.content for m in react_messages(context))
    expand_system, expand_user = (m.content for m in expand_messages(context, 2, [SkillCall("navigate_to", ("apple_1",))]))
    for line in ("- Work on the objects the instruction names. To move one, first get it (navigate_to it, pick it),",
                 "- If an action was refused because its preconditions do not hold, fix those preconditions first.",
                 "4. navigate_to(mug_3) -> succeeded"):
        assert line in react_system.splitlines() and line in expand_system.splitlines()
    assert '{"actions": ["pick(mug_3)", "navigate_to(cabinet_2)"]}' in expand_system
    assert "Instruction (again): do it" in expand_user and "1. navigate_to(apple_1)" in expand_user
