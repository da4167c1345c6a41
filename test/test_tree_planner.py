"""Tree-Planner: prefix merging, backtracking to the nearest fork, grounded deciding, resampling."""
from __future__ import annotations

from planner_fixtures import C, ScriptedLLM, setup

from conceptagent_ros.planning.planners.tree_planner import TreePlanner, backtrack, build_action_tree
from conceptagent_ros.planning.proposal import StepRecord


def plans(*texts: str):
    return [[C(a) for a in t.split(" ; ")] for t in texts]


def test_plans_merge_on_shared_prefixes():
    root = build_action_tree(plans("navigate_to(apple_1) ; pick(apple_1) ; done()",
                                   "navigate_to(apple_1) ; pick(apple_1) ; done()",
                                   "navigate_to(apple_1) ; search(apple_1) ; done()",
                                   "navigate_to(fridge_1) ; open(fridge_1)"))
    assert [str(c.call) for c in root.children] == ["navigate_to(apple_1)", "navigate_to(fridge_1)"]
    first = root.children[0]
    assert first.support == 3 and [str(c.call) for c in first.children] == ["pick(apple_1)", "search(apple_1)"]
    assert root.count() - 1 == 7  # 11 actions sampled, 7 distinct nodes


def test_backtracking_climbs_to_the_nearest_fork_with_a_valid_child():
    root = build_action_tree(plans("a(x) ; b(x) ; c(x)", "a(x) ; b(x) ; d(x)", "a(x) ; e(x)", "f(x)"))
    a = root.children[0]
    b = a.children[0]
    c, d = b.children
    assert backtrack(c) is b  # b still has d
    assert not c.valid and d.valid
    assert backtrack(d) is a  # b is used up, so is invalid; a still has e
    assert not b.valid and a.valid_children() == [a.children[1]]
    assert backtrack(a.children[1]) is root and not a.valid  # only f(x) is left at the root
    assert backtrack(root.children[1]) is None  # the whole tree is used up


def test_failure_backtracks_and_decides_at_the_fork_without_sampling_again():
    s = setup()
    llm = ScriptedLLM(plans=plans("navigate_to(apple_1) ; pick(apple_1) ; done()",
                                  "navigate_to(apple_1) ; search(countertop_1) ; done()",
                                  "navigate_to(fridge_1) ; open(fridge_1) ; done()"))
    planner = TreePlanner(llm)
    first = planner.propose(s.context())
    assert llm.samplings == 1 and llm.asked_choose == [("navigate_to(apple_1)", "navigate_to(fridge_1)")]
    assert first.call == C("navigate_to(apple_1)")
    history = (StepRecord(1, first.call, True, True, "ok"),)
    second = planner.propose(s.context(history=history, step=2))
    assert second.call == C("pick(apple_1)")
    # pick fails: its subtree is invalid; the fork below navigate_to(apple_1) still offers the search
    history += (StepRecord(2, second.call, True, False, "the gripper slipped", "physical"),)
    third = planner.propose(s.context(history=history, step=3))
    assert third.call == C("search(countertop_1)") and llm.samplings == 1
    assert planner.counters.values["corrections"] == 1
    # a single valid child needs no LLM call
    assert len(llm.asked_choose) == 2


def test_a_used_up_tree_is_sampled_again_with_the_failure_as_feedback():
    s = setup()
    llm = ScriptedLLM(plans=plans("navigate_to(apple_1) ; pick(apple_1)"))
    planner = TreePlanner(llm)
    first = planner.propose(s.context())
    history = (StepRecord(1, first.call, False, False, "refused: (holding apple_1)", "blocked"),)
    planner.propose(s.context(history=history, step=2))
    assert llm.samplings == 2 and "refused" in planner._feedback
