"""bench --translate: goals come from the instructions, success is judged on the task's own goal, and
each translated goal is marked right or wrong by meaning on the task's scene."""
from __future__ import annotations

import textwrap

from conceptagent_ros.evaluation.bench import BenchConfig, run_bench, summarize
from conceptagent_ros.evaluation.goal_equivalence import translation_verdict
from conceptagent_ros.evaluation.tasks import load_tasks


def test_the_same_goal_by_meaning_not_by_text():
    # studio_kitchen has one apple and one fridge: naming them or quantifying over them is the same goal
    verdict = translation_verdict("studio_kitchen", "(exists (?a - apple ?f - fridge) (in ?a ?f))", "(in apple_1 fridge_1)")
    assert verdict.same and verdict.exact and verdict.label == "right"
    # family_house has two sinks: "a sink" is not "the bathroom's sink"
    verdict = translation_verdict("family_house", "(exists (?s - soap_bottle ?k - sink) (in ?s ?k))",
                                  "(exists (?s - soap_bottle) (in ?s sink_2))")
    assert not verdict.same and verdict.label == "wrong"
    assert verdict.witness is not None and any(atom[2] == "sink_1" for atom in verdict.witness)
    # the conjunction in another order, and a negation written two ways, are the same goal
    assert translation_verdict("studio_kitchen", "(and (open fridge_1) (in apple_1 fridge_1))",
                               "(and (in apple_1 fridge_1) (open fridge_1))").same
    assert not translation_verdict("studio_kitchen", "(open fridge_1)", "(not (open fridge_1))").same


def test_bench_translate_scores_the_goal_apart_from_the_execution(tmp_path):
    path = tmp_path / "tasks.yaml"
    path.write_text(textwrap.dedent("""\
        tasks:
          - {id: right, scene: studio_kitchen, instruction: put the apple in the fridge, goal: (in apple_1 fridge_1)}
          - {id: wrong, scene: family_house, instruction: put the soap bottle in a sink,
             goal: "(exists (?s - soap_bottle) (in ?s sink_2))"}
          - {id: refused, scene: studio_kitchen, instruction: juggle the oranges, goal: (in apple_1 fridge_1)}
        """))
    tasks = load_tasks(path)
    rows = {r["task_id"]: r for r in run_bench(tasks, BenchConfig(translate=True, max_steps=40))}
    assert rows["right"]["goal_right"] == "right" and rows["right"]["success"]
    assert rows["wrong"]["goal_right"] == "wrong"
    # "a sink" is any sink, and the task's goal is the bathroom's (sink_2): the translation is wrong by
    # meaning. Judged on the task's goal: the robot reached its own goal (the soap bottle in the nearer,
    # kitchen sink), which is not the task's: a failure, not a success
    assert rows["wrong"]["judged_on"] == "(exists (?s - soap_bottle) (in ?s sink_2))"
    assert rows["wrong"]["stats"]["declared_done"]
    assert not rows["wrong"]["success"] and rows["wrong"]["unmet"] == ["(exists (?s - soap_bottle) (in ?s sink_2))"]
    assert rows["refused"]["goal_right"] == "refused" and "error" in rows["refused"]
    summary = summarize(list(rows.values()))
    assert sum(s["goals_right"] for s in summary) == 1 and sum(s["goals_refused"] for s in summary) == 1
