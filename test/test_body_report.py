"""The body's report (evaluation/body_report.py): failures by skill and error code, the tasks that
failed on the body but not symbolically, and the comparison table, on hand-made bench rows."""
from __future__ import annotations

from pathlib import Path

from conceptagent_ros.evaluation.body_report import (
    PICTURES,
    body_markdown,
    cause,
    comparison_rows,
    failures_by_skill,
    picture_name,
    why_failed,
)
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome


def _row(task: str, success: bool, failures: list[str], steps: int = 5, seconds: float = 10.0, **more: object) -> dict:
    return {"suite": "easy", "planner": "react", "seed": 0, "task_id": task, "scene": "studio_kitchen",
            "success": success, "skill_failures": failures, "stats": {"steps": steps}, "wall_seconds": seconds,
            "unmet": [] if success else [f"(in {task} sink_1)"], **more}


def test_failures_are_counted_by_skill_and_code_with_the_episodes_they_happened_in() -> None:
    rows = [_row("a", False, ["pick:COLLISION", "pick:COLLISION", "navigate_to:BLOCKED"]),
            _row("b", True, ["pick:COLLISION", "open:unavailable"]),
            _row("c", True, [])]
    assert failures_by_skill(rows) == [("pick", "COLLISION", 3, 2), ("navigate_to", "BLOCKED", 1, 1),
                                       ("open", "unavailable", 1, 1)]


def test_a_skill_outcome_is_counted_by_its_code_else_its_failure_kind() -> None:
    call = SkillCall("pick", ("cup_1",))
    assert SkillOutcome(call, False, "m", "physical", "SLIPPED").kind == "SLIPPED"
    assert SkillOutcome(call, False, "m", "precondition").kind == "precondition"
    assert SkillOutcome(call, False, "m", "physical", "SLIPPED").to_json()["code"] == "SLIPPED"
    assert "code" not in SkillOutcome(call, True, "m").to_json()


def test_the_report_lists_what_failed_only_on_the_body_with_why() -> None:
    physical = [_row("a", False, ["pick:SLIPPED", "pick:SLIPPED"], steps=9, seconds=30.0),
                _row("b", False, ["open:unavailable"]), _row("c", True, [], seconds=20.0)]
    symbolic = [_row("a", True, [], seconds=0.5), _row("b", False, []), _row("c", True, [], seconds=0.5)]
    table = {(r["body"]): r for r in comparison_rows(physical, symbolic)}
    assert (table["pybullet"]["successes"], table["symbolic"]["successes"]) == (1, 2)
    assert table["pybullet"]["seconds_per_task"] == (30.0 + 10.0 + 20.0) / 3
    assert why_failed(physical[0]) == "pick:SLIPPED x2; unmet (in a sink_1)"
    text = body_markdown(physical, symbolic, None)
    only = text.split("## Failed on the body, succeeded in the symbolic world")[1]
    assert "- a (studio_kitchen, seed 0): pick:SLIPPED x2" in only and "- b " not in only  # b failed in both
    assert "| pick | SLIPPED | 2 | 1 |" in text and "| easy | react | pybullet | 3 | 1/3 = 33%" in text


def test_why_names_the_stop_only_where_no_skill_failed() -> None:
    budget = _row("d", False, [], stats={"steps": 40, "stop_reason": "step budget of 40 used up"})
    assert why_failed(budget) == "unmet (in d sink_1); step budget of 40 used up"
    kept_failing = _row("e", False, ["open:unavailable"], stats={"steps": 9, "stop_reason": "the skill open kept failing"})
    assert why_failed(kept_failing) == "open:unavailable; unmet (in e sink_1)"


def test_a_goal_judged_on_the_bodys_flags_is_left_out_of_both_bodies_figures() -> None:
    physical = [_row("fill_vase", True, [], symbolic_goal=["filled"]), _row("a", True, []), _row("b", False, [])]
    symbolic = [_row("fill_vase", True, []), _row("a", True, []), _row("b", True, [])]
    table = {r["body"]: r for r in comparison_rows(physical, symbolic)}
    assert (table["pybullet"]["episodes"], table["pybullet"]["successes"]) == (2, 1)
    assert (table["symbolic"]["episodes"], table["symbolic"]["successes"]) == (2, 2)  # the same two tasks
    text = body_markdown(physical, symbolic, None)
    assert "- fill_vase (filled): reached on the flags" in text.split("## Left out")[1]


def test_the_bench_summary_counts_a_flag_judged_goal_apart_from_the_physical_figure() -> None:
    from conceptagent_ros.evaluation.bench import markdown_table, summarize

    rows = [_row("fill_vase", True, [], llm="offline", symbolic_goal=["filled"]),
            _row("a", True, [], llm="offline"), _row("b", False, [], llm="offline")]
    [s] = summarize(rows)
    assert (s["episodes"], s["successes"], s["success_rate"]) == (2, 1, 0.5)
    assert (s["symbolic_goal_episodes"], s["symbolic_goal_successes"]) == (1, 1)
    assert "react / easy: 1/1 reached their goal that way (fill_vase)" in markdown_table([s])
    [alone] = summarize(rows[:1])  # nothing judged physically: no physical figure at all
    assert (alone["episodes"], alone["successes"], alone["success_rate"]) == (0, 0, 0.0)


def test_the_ros_suite_leaves_a_flag_judged_goal_out_of_its_figure() -> None:
    from conceptagent_ros.ros.bench.graph_suite import GraphEpisode, GraphSuiteConfig, summary_markdown

    episodes = [GraphEpisode("moderate_04", "family_house", "fill a vase", True, True, 6, 7.0, symbolic_goal=["filled"]),
                GraphEpisode("moderate_01", "family_house", "put the tomato away", False, False, 9, 30.0)]
    text = summary_markdown(episodes, GraphSuiteConfig(), "moderate", body="conceptagent_mm in PyBullet")
    assert "**0/1 tasks succeeded.** Left out of that figure: moderate_04" in text


def test_failed_episodes_are_grouped_by_cause_with_their_pictures(tmp_path: Path) -> None:
    physical = [_row("a", False, ["pick:NO_GRASP_FOUND", "navigate_to:OUT_OF_REACH", "pick:NO_GRASP_FOUND"]),
                _row("b", False, ["open:UNREACHABLE", "place:UNREACHABLE"]),
                _row("c", False, ["pick:NO_GRASP_FOUND"]),
                _row("d", False, [], stats={"steps": 40, "stop_reason": "step budget of 40 used up"}),
                _row("e", True, ["pick:NO_GRASP_FOUND"])]
    assert [cause(r) for r in physical[:4]] == ["pick:NO_GRASP_FOUND", "place:UNREACHABLE", "pick:NO_GRASP_FOUND",
                                                "step budget of 40 used up"]
    (tmp_path / PICTURES).mkdir()
    (tmp_path / PICTURES / picture_name("react", 0, "c")).write_bytes(b"png")
    text = body_markdown(physical, [], tmp_path).split("## Failures by cause")[1]
    assert text.index("### pick:NO_GRASP_FOUND (2 episodes)") < text.index("### place:UNREACHABLE (1 episode)")
    section = text.split("### pick:NO_GRASP_FOUND (2 episodes)")[1].split("###")[0]
    assert f"![c]({PICTURES}/{picture_name('react', 0, 'c')})" in section and "![a]" not in section  # a has none
    assert "- e " not in text  # it succeeded
