"""LLM-guided MCTS: UCB1, backpropagation, pruning inside the tree, subtree reuse."""
from __future__ import annotations

import math

from planner_fixtures import C, ScriptedLLM, setup

from conceptagent_ros.planning.planners.mcts import (
    MCTSConfig,
    MCTSPlanner,
    Node,
    backpropagate,
    best_child,
    ucb1,
)
from conceptagent_ros.planning.proposal import StepRecord


def test_ucb1_prefers_unvisited_then_balances_value_and_exploration():
    s = setup()
    root = Node(None, s.graph.symbolic_state(), visits=10)
    fresh = Node(C("navigate_to(fridge_1)"), root.state, root)
    assert ucb1(fresh, root.visits, 1.0) == math.inf
    good = Node(C("open(fridge_1)"), root.state, root, visits=4, value_sum=3.2)
    rare = Node(C("pick(apple_1)"), root.state, root, visits=1, value_sum=0.5)
    assert math.isclose(ucb1(good, 10, 1.0), 0.8 + math.sqrt(math.log(10) / 4))
    assert math.isclose(ucb1(rare, 10, 1.0), 0.5 + math.sqrt(math.log(10) / 1))
    assert ucb1(rare, 10, 1.0) > ucb1(good, 10, 1.0)  # exploration bonus wins at c=1 ...
    assert ucb1(rare, 10, 0.1) < ucb1(good, 10, 0.1)  # ... and loses when exploitation dominates


def test_backpropagation_keeps_the_mean_along_the_path():
    s = setup()
    root = Node(None, s.graph.symbolic_state())
    child = Node(C("navigate_to(fridge_1)"), root.state, root)
    leaf = Node(C("open(fridge_1)"), root.state, child)
    root.children, child.children = [child], [leaf]
    backpropagate(leaf, 0.9)
    backpropagate(child, 0.3)
    assert (root.visits, child.visits, leaf.visits) == (2, 2, 1)
    assert math.isclose(child.value, 0.6) and math.isclose(root.value, 0.6) and math.isclose(leaf.value, 0.9)
    assert leaf.path() == [C("navigate_to(fridge_1)"), C("open(fridge_1)")]


def scripted() -> ScriptedLLM:
    return ScriptedLLM(
        proposals={
            (): ["pick(apple_1)", "navigate_to(fridge_1)", "navigate_to(apple_1)"],
            ("navigate_to(fridge_1)",): ["open(fridge_1)", "pick(apple_1)"],
            ("navigate_to(apple_1)",): ["pick(apple_1)"],
            ("navigate_to(fridge_1)", "open(fridge_1)"): ["navigate_to(apple_1)"],
        },
        scores={("navigate_to(fridge_1)",): 0.6, ("navigate_to(fridge_1)", "open(fridge_1)"): 0.8,
                ("navigate_to(apple_1)",): 0.3, ("pick(apple_1)",): 0.9})


def test_pruning_refuses_infeasible_children_without_spending_llm_calls():
    s = setup()
    llm = scripted()
    planner = MCTSPlanner(llm, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, prune=True))
    proposal = planner.propose(s.context())
    root = planner.root
    assert root is not None
    # pick(apple_1) is out of reach at the start: refused with the reason, never critiqued
    assert "pick(apple_1)" in root.pruned and "near" in root.pruned["pick(apple_1)"]
    assert ("pick(apple_1)",) not in llm.asked_critic
    # the first choice was refused, so the LLM was asked again with the reason in its history
    assert llm.asked_expand.count(()) == 2
    assert proposal.call == C("navigate_to(fridge_1)")
    assert "best plan: navigate_to(fridge_1) -> open(fridge_1)" in proposal.raw
    assert planner.counters.values["expansions"] == 3


def test_without_pruning_the_search_spends_calls_on_infeasible_branches():
    s = setup()
    llm = scripted()
    llm.proposals[("pick(apple_1)",)] = ["navigate_to(fridge_1)"]
    llm.scores[("pick(apple_1)", "navigate_to(fridge_1)")] = 0.95
    planner = MCTSPlanner(llm, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, prune=False))
    proposal = planner.propose(s.context())
    assert ("pick(apple_1)",) in llm.asked_critic  # the (impossible) pick was scored ...
    assert proposal.call == C("pick(apple_1)")  # ... and, scored high by the critic, chosen


def test_the_subtree_is_reused_when_the_observation_agrees():
    s = setup()
    llm = scripted()
    planner = MCTSPlanner(llm, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3))
    first = planner.propose(s.context())
    chosen = best_child(planner.root)
    assert first.call == C("navigate_to(fridge_1)") and chosen is not None
    kept = {str(c.call) for c in chosen.children}
    outcome = s.world.execute(first.call)
    s.graph.integrate(s.world.observe(), 1)
    history = (StepRecord(1, first.call, True, outcome.success, outcome.message),)
    planner.propose(s.context(history=history, step=2))
    assert planner.root is chosen and planner.root.parent is None
    assert kept <= {str(c.call) for c in planner.root.children}
    assert planner.counters.values.get("reused_nodes", 0) >= 1


def test_a_failed_action_starts_a_fresh_tree():
    s = setup()
    planner = MCTSPlanner(scripted(), s.verifier, s.effects, MCTSConfig(expansions=2))
    first = planner.propose(s.context())
    old_root = planner.root
    history = (StepRecord(1, first.call, True, False, "the gripper slipped", "physical"),)
    planner.propose(s.context(history=history, step=2))
    assert planner.root is not old_root and planner.root.parent is None
