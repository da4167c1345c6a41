"""Grounded choices: with grounding on, the agent tells its proposer which calls it may make now, and
a chat proposer's reply schema admits those alone. Every offered call is feasible by the
independent judge (test/pddl_judge.py, which shares no code with the verifier); what is left out
is left out for a reason the test states itself; a call that
leads back to a state the robot was in is not offered; once the goal holds done() is the only
choice; grounding off offers nothing."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import yaml
from pddl_judge import Judge, goal_holds
from recording_proposer import Recording

from conceptagent_ros.evaluation.episode import EpisodeSpec, embedded_task_map, run_episode
from conceptagent_ros.planning.proposal import DecisionContext
from conceptagent_ros.planning.task import TaskRequest, prepare_task, run_task
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import SkillCall, load_skill_library

CONFIG = Path(__file__).resolve().parent.parent / "config"
JUDGE = Judge(sorted(yaml.safe_load((CONFIG / "categories.yaml").read_text())["categories"]))
SKILLS = load_skill_library()
GOAL = "(in apple_1 dining_table_1)"


def run_recorded(calls: list[SkillCall], planner: str = "react",
                 goal: str = GOAL) -> tuple[list[DecisionContext], object]:
    world = World(load_scene("studio_kitchen"))
    task = prepare_task(TaskRequest("put the apple on the dining table", goal=goal, planner=planner, max_steps=12),
                        embedded_task_map(world))
    proposer = Recording(calls)
    task.built.proposer = proposer
    outcome = run_task(task, world, world.robot)
    return proposer.contexts, outcome


def within_reach(context: DecisionContext) -> set[str]:
    return {a[1] for a in context.state.atoms if a[0] == "near"}


def not_near(context: DecisionContext) -> frozenset:
    return frozenset(a for a in context.state.atoms if a[0] != "near")


def judged_feasible(context: DecisionContext) -> set[SkillCall]:
    ids = sorted(context.state.types)
    return {SkillCall(s.name, args) for s in SKILLS for args in itertools.product(ids, repeat=s.arity)
            if JUDGE.feasible(s.name, args, context.state.atoms, context.state.types)}


def drive_opens_nothing(context: DecisionContext, target: str) -> bool:
    """A drive to a thing after which no call over what it reaches becomes possible: within reach of
    the target and of what is in it, nothing else (the drive's effect as config/skills.yaml states it)."""
    atoms, types = context.state.atoms, context.state.types
    if types[target] == "room":
        return False
    reached = {target} | {a[1] for a in atoms if a[0] == "in" and a[2] == target}
    after = frozenset(a for a in atoms if a[0] != "near") | {("near", o) for o in reached}
    ids = sorted(types)
    for s in SKILLS:
        if s.name in ("navigate_to", "done"):
            continue
        for args in itertools.product(ids, repeat=s.arity):
            if reached.intersection(args) and JUDGE.feasible(s.name, args, after, types) \
                    and not JUDGE.feasible(s.name, args, atoms, types):
                return False
    return True


PICK_AND_PLACE = [SkillCall("navigate_to", ("apple_1",)), SkillCall("pick", ("apple_1",)),
                  SkillCall("navigate_to", ("dining_table_1",)),
                  SkillCall("place", ("apple_1", "dining_table_1"))]


def test_every_offered_call_is_feasible_and_what_is_left_out_is_left_out_for_a_reason():
    contexts, outcome = run_recorded(PICK_AND_PLACE)
    assert outcome.believed_success
    for i, context in enumerate(contexts):
        offered = set(context.choices or ())
        before = contexts[i - 1] if i else None
        last = context.history[-1].call if context.history else None
        feasible = judged_feasible(context)
        assert offered and offered <= feasible, sorted(map(str, offered - feasible))
        goal_met = goal_holds(GOAL, context.state.atoms, context.state.types)
        for call in feasible - offered:
            reasons = {
                "done() before the goal holds": call.skill == "done" and not goal_met,
                "anything but done() once it holds": call.skill != "done" and goal_met,
                "going to what is within reach": call.skill == "navigate_to" and call.args[0] in within_reach(context),
                "going to a thing where nothing new can be done, not named by the goal": call.skill == "navigate_to"
                and call.args[0] not in GOAL and drive_opens_nothing(context, call.args[0]),
                "searching what was searched": call.skill == "search" and ("searched", *call.args) in context.state.atoms,
                # a state the robot was in already: the last step undone
                "putting back what was just picked": before is not None and last == SkillCall("pick", call.args[:1])
                and call.skill == "place" and ("in", *call.args) in before.state.atoms,
                "driving back to where it was, nothing else changed": call.skill == "navigate_to" and any(
                    call.args[0] in within_reach(earlier) and not_near(earlier) == not_near(context)
                    for earlier in contexts[:i]),
            }
            assert any(reasons.values()), f"{call} is feasible at step {context.step} but was not offered"
    start, at_apple = contexts[0], contexts[1]
    assert "apple_1" not in within_reach(start) and "apple_1" in within_reach(at_apple)
    assert SkillCall("navigate_to", ("apple_1",)) in start.choices and SkillCall("pick", ("apple_1",)) not in start.choices
    assert SkillCall("pick", ("apple_1",)) in at_apple.choices
    assert SkillCall("navigate_to", ("apple_1",)) not in at_apple.choices
    assert SkillCall("done") not in at_apple.choices and contexts[-1].choices == (SkillCall("done"),)


def test_holding_something_the_robot_is_offered_drives_to_where_it_can_put_it_not_to_every_thing_in_view():
    contexts, _ = run_recorded(PICK_AND_PLACE[:2])
    holding = contexts[2]
    drives = {c.args[0] for c in holding.choices if c.skill == "navigate_to"}
    assert {"dining_table_1", "countertop_2", "sink_1"} <= drives  # receptacles open to a place
    assert not {"book_1", "knife_1", "fridge_1", "cabinet_1"} & drives  # nothing to put it on; closed
    empty_handed = contexts[0]
    assert {"book_1", "knife_1", "fridge_1", "apple_1"} <= {c.args[0] for c in empty_handed.choices
                                                          if c.skill == "navigate_to"}


def test_no_call_is_offered_that_leads_back_to_where_the_robot_was():
    back_and_forth = [SkillCall("navigate_to", ("fridge_1",)), SkillCall("navigate_to", ("sink_1",)),
                      SkillCall("navigate_to", ("fridge_1",))]
    contexts, _ = run_recorded(back_and_forth)
    at_fridge, at_fridge_again = contexts[1], contexts[3]
    assert at_fridge.state.atoms == at_fridge_again.state.atoms  # the same belief: nothing new was seen
    assert SkillCall("navigate_to", ("sink_1",)) in at_fridge.choices
    assert SkillCall("navigate_to", ("sink_1",)) not in at_fridge_again.choices
    assert SkillCall("navigate_to", ("dining_table_1",)) in at_fridge_again.choices
    at_sink = contexts[2]  # the robot was within reach of the fridge, and nothing else has changed since
    assert SkillCall("navigate_to", ("fridge_1",)) not in at_sink.choices
    assert SkillCall("navigate_to", ("dining_table_1",)) in at_sink.choices


def test_a_drive_to_what_the_goal_names_is_offered_even_where_nothing_can_be_done_there_yet():
    # holding the apple, the closed fridge cannot be opened nor filled: the way on is to go there,
    # put the apple down and open it. Named by a constant or by the kind it quantifies over
    for goal in ("(in apple_1 fridge_1)", "(exists (?a - apple ?f - fridge) (in ?a ?f))"):
        contexts, _ = run_recorded(PICK_AND_PLACE[:2], goal=goal)
        holding = contexts[2]
        assert ("open", "fridge_1") not in holding.state.atoms and drive_opens_nothing(holding, "fridge_1")
        assert SkillCall("navigate_to", ("fridge_1",)) in holding.choices
        assert SkillCall("navigate_to", ("cabinet_1",)) not in holding.choices  # closed too, not the goal's


def test_grounding_off_offers_no_choices():
    contexts, _ = run_recorded(PICK_AND_PLACE, planner="base")
    assert contexts and all(c.choices is None for c in contexts)


def test_a_chat_proposer_decodes_from_the_offered_calls_alone(chat_server, monkeypatch):
    server = chat_server(['{"action": "navigate_to(apple_1)"}', '{"action": "pick(apple_1)"}',
                          '{"action": "navigate_to(dining_table_1)"}',
                          '{"action": "place(apple_1, dining_table_1)"}', '{"action": "done()"}'])
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    result = run_episode(EpisodeSpec.of(instruction="put the apple on the dining table", scene="studio_kitchen",
                                        goal=GOAL, planner="react", llm="openai:m", seed=0, max_steps=8))
    assert result.success and result.stats.infeasible_proposed == 0
    at_apple = server.requests[1]
    enum = at_apple["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"]
    assert "pick(apple_1)" in enum and "navigate_to(apple_1)" not in enum and "done()" not in enum
    assert "place(apple_1, dining_table_1)" not in enum  # the hand is empty
    last = json.dumps(server.requests[-1]["response_format"])
    assert '"done()"' in last
