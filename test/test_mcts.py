"""LLM-guided MCTS: UCB1, backpropagation, pruning inside the tree, subtree reuse."""
from __future__ import annotations

import math

import pytest
from planner_fixtures import C, ScriptedLLM, setup

from conceptagent_ros.planning.planners.mcts import (
    MCTSConfig,
    MCTSPlanner,
    Node,
    _walk,
    backpropagate,
    best_child,
    puct,
    ucb1,
)
from conceptagent_ros.planning.proposal import StepRecord
from conceptagent_ros.scene.symbolic import SymbolicState


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
    # what was weighed at the root goes to the trace: each candidate with its value and visits
    weighed = proposal.raw.split("(weighed: ")[1]
    assert "navigate_to(fridge_1) 0." in weighed and "navigate_to(apple_1) 0." in weighed
    assert "pick(apple_1)" not in weighed  # refused, never weighed
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


class RecordingLLM(ScriptedLLM):
    """A scripted model that also keeps the history each question was asked with."""

    def __init__(self, base: ScriptedLLM):
        super().__init__(proposals=base.proposals, scores=base.scores)
        self.expand_histories: list[tuple[StepRecord, ...]] = []
        self.critic_histories: list[tuple[StepRecord, ...]] = []
        self.critic_predicted: dict[tuple[str, ...], SymbolicState | None] = {}

    def propose_actions(self, context, k, planned=()):  # noqa: ANN001, ANN201 - the PlannerLLM signature
        self.expand_histories.append(context.history)
        return super().propose_actions(context, k, planned)

    def critique(self, context, plan, predicted=None):  # noqa: ANN001, ANN201
        self.critic_histories.append(context.history)
        self.critic_predicted[tuple(map(str, plan))] = predicted
        return super().critique(context, plan)


@pytest.mark.parametrize("grounded", [True, False])
def test_the_critic_is_told_the_state_a_plan_leads_to_only_where_grounding_predicts_it(grounded: bool):
    s = setup()
    llm = RecordingLLM(scripted())
    MCTSPlanner(llm, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, prune=grounded, prior=False)
                ).propose(s.context())
    assert ("navigate_to(fridge_1)", "open(fridge_1)") in llm.critic_predicted
    predicted = llm.critic_predicted[("navigate_to(fridge_1)", "open(fridge_1)")]
    if not grounded:  # without grounding the search knows no preconditions or effects to predict with
        assert set(llm.critic_predicted.values()) == {None}
        return
    assert predicted is not None
    # after driving to the fridge and opening it: the fridge open and within reach, the apple not
    assert ("open", "fridge_1") in predicted.atoms and ("near", "fridge_1") in predicted.atoms
    assert ("open", "fridge_1") not in s.context().state.atoms
    assert ("near", "apple_1") not in predicted.atoms


def _refusal_feedback(history: tuple[StepRecord, ...]) -> list[str]:
    return [r.feedback for r in history if not r.executed and r.failure == "blocked"]


def test_a_refused_first_choice_reaches_every_later_prompt_and_the_critic_with_its_reason():
    s = setup()
    llm = RecordingLLM(scripted())
    planner = MCTSPlanner(llm, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, prune=True))
    planner.propose(s.context())
    # the first question had no refusal to tell; every question after the refusal names it, reason included
    assert _refusal_feedback(llm.expand_histories[0]) == []
    later = llm.expand_histories[1:] + llm.critic_histories
    assert later and all(any("pick(apple_1)" in f and "near" in f for f in _refusal_feedback(h)) for h in later)
    # the agent's own history is not touched: the feedback lives in what the model is asked with
    assert s.context().history == ()
    # and it is still told at the next decision, in the agent's history window
    planner.propose(s.context(history=(StepRecord(1, C("navigate_to(fridge_1)"), True, True, "ok"),), step=2))
    assert any("pick(apple_1)" in f for f in _refusal_feedback(llm.expand_histories[-1]))


def test_a_refusal_leaves_the_feedback_after_the_history_window():
    s = setup()
    llm = RecordingLLM(scripted())
    planner = MCTSPlanner(llm, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, prune=True))
    planner.propose(s.context())
    assert planner.refusals  # pick(apple_1), refused at step 1
    asked = len(llm.expand_histories)
    planner.propose(s.context(step=40))
    # the first question at step 40 comes before this decision's own refusal: nothing is left to tell
    assert _refusal_feedback(llm.expand_histories[asked]) == []
    assert all(r.step == 40 for r in planner.refusals.values())


def test_a_path_that_retries_a_failed_call_from_the_state_it_failed_in_is_scored_lower():
    s = setup()
    base = scripted()
    base.proposals[()] = ["navigate_to(fridge_1)", "navigate_to(apple_1)"]
    base.scores[("navigate_to(fridge_1)",)] = 0.6
    base.scores[("navigate_to(apple_1)",)] = 0.5
    # UCB1 visits every root child within 3 expansions, so both scores are there to compare (PUCT
    # would leave the model's second choice unexpanded); the discount does not depend on selection
    planner = MCTSPlanner(base, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, reuse=False, prior=False))
    first = planner.propose(s.context())
    assert first.call == C("navigate_to(fridge_1)")
    # it failed and changed nothing: the same observed state comes back
    failed = (StepRecord(1, first.call, True, False, "navigate_to(fridge_1) failed", "physical"),)
    planner.propose(s.context(history=failed, step=2))
    scores = {tuple(map(str, n.path())): n.score for n in _walk(planner.root) if n.score is not None}
    assert math.isclose(scores[("navigate_to(fridge_1)",)], 0.6 * 0.5)  # FAILED_DISCOUNT
    assert math.isclose(scores[("navigate_to(apple_1)",)], 0.5)
    # and the plans that go on from the failed call are discounted with it
    assert math.isclose(scores[("navigate_to(fridge_1)", "open(fridge_1)")], 0.8 * 0.5)
    # a call that failed elsewhere (another state) is not discounted here
    other = MCTSPlanner(scripted(), s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, reuse=False))
    other.failed[C("navigate_to(fridge_1)")] = {frozenset({("holding", "apple_1")})}
    other.propose(s.context())
    assert next(c.score for c in other.root.children if c.call == C("navigate_to(fridge_1)")) == 0.6


def test_a_path_back_to_the_state_of_a_recent_decision_is_scored_lower():
    from dataclasses import replace

    s = setup()
    base = scripted()
    base.proposals[()] = ["navigate_to(fridge_1)", "navigate_to(apple_1)", "pick(apple_1)"]
    # UCB1, so every root child is scored (see the test above)
    planner = MCTSPlanner(base, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, reuse=False, prior=False))
    at_fridge = s.effects.apply(C("navigate_to(fridge_1)"), s.context().state)
    at_apple = s.effects.apply(C("navigate_to(apple_1)"), at_fridge)
    assert at_fridge.atoms != at_apple.atoms
    planner.propose(replace(s.context(), state=at_fridge, step=1))
    planner.propose(replace(s.context(history=(StepRecord(1, C("navigate_to(apple_1)"), True, True, "ok"),)),
                            state=at_apple, step=2))
    scores = {tuple(map(str, n.path())): n.score for n in _walk(planner.root) if n.score is not None}
    # from the apple, going back to the fridge returns to the state of the decision before: no progress
    assert next(c for c in planner.root.children if c.call == C("navigate_to(fridge_1)")).state.atoms == at_fridge.atoms
    assert math.isclose(scores[("navigate_to(fridge_1)",)], 0.6 * 0.5)  # REVISIT_DISCOUNT
    # driving to where it stands changes nothing: no progress either
    assert math.isclose(scores[("navigate_to(apple_1)",)], 0.3 * 0.5)
    # picking the apple up leads somewhere new: the critic's score as it is
    assert math.isclose(scores[("pick(apple_1)",)], 0.9)


def test_puct_weighs_the_models_ranking_against_the_critic():
    s = setup()
    root = Node(None, s.graph.symbolic_state(), visits=4)
    first = Node(C("navigate_to(fridge_1)"), root.state, root, visits=2, value_sum=1.0, prior=1.0)
    second = Node(C("navigate_to(apple_1)"), root.state, root, visits=2, value_sum=1.1, prior=0.5)
    total = first.prior + second.prior
    assert math.isclose(puct(first, 4, 1.0, total), 0.5 + (1.0 / 1.5) * 2 / 3)
    assert puct(first, 4, 1.0, total) > puct(second, 4, 1.0, total)  # the model's first choice, nearly as good
    far_better = Node(C("navigate_to(apple_1)"), root.state, root, visits=2, value_sum=1.9, prior=0.5)
    assert puct(far_better, 4, 1.0, total) > puct(first, 4, 1.0, total)  # unless the critic says clearly otherwise


def close_call() -> ScriptedLLM:
    """The model ranks going to the fridge first; the critic scores the other path a little higher."""
    return ScriptedLLM(
        proposals={(): ["navigate_to(fridge_1)", "navigate_to(apple_1)"],
                   ("navigate_to(fridge_1)",): ["open(fridge_1)"], ("navigate_to(apple_1)",): ["pick(apple_1)"]},
        scores={("navigate_to(fridge_1)",): 0.5, ("navigate_to(fridge_1)", "open(fridge_1)"): 0.5,
                ("navigate_to(apple_1)",): 0.56, ("navigate_to(apple_1)", "pick(apple_1)"): 0.56})


def test_with_the_prior_the_models_first_choice_stands_against_a_slightly_higher_score():
    s = setup()
    ucb = MCTSPlanner(close_call(), s.verifier, s.effects, MCTSConfig(expansions=5, branching=2, prior=False))
    with_prior = MCTSPlanner(close_call(), s.verifier, s.effects, MCTSConfig(expansions=5, branching=2))
    assert ucb.propose(s.context()).call == C("navigate_to(apple_1)")
    assert with_prior.propose(s.context()).call == C("navigate_to(fridge_1)")


def test_the_prior_follows_grounding_unless_it_is_set():
    """`prior=auto`, the default: PUCT where grounding tells the model when its first choice rests on a
    wrong belief, UCB1 where nothing does (planning/planners/registry.py); an explicit value wins."""
    from conceptagent_ros.errors import ConceptAgentError
    from conceptagent_ros.llm.spec import parse_llm_spec
    from conceptagent_ros.planning.planners import PlannerSpec, build_planner

    s = setup()

    def prior(text: str) -> bool:
        built = build_planner(PlannerSpec.parse(text), parse_llm_spec("simulated:0"), s.world.domain, s.world.skills)
        assert isinstance(built.proposer, MCTSPlanner)
        return built.proposer.config.prior

    assert prior("mcts") is True
    assert prior("mcts:grounding=off,prune=off") is False
    assert prior("mcts:grounding=off,prior=on") is True
    assert prior("mcts:prior=off") is False
    with pytest.raises(ConceptAgentError, match="use on or off"):
        prior("mcts:prior=maybe")


class OfferRecordingLLM(ScriptedLLM):
    """A scripted model that keeps, for each expansion, the calls it was offered to choose from."""

    def __init__(self, base: ScriptedLLM):
        super().__init__(proposals=base.proposals, scores=base.scores)
        self.offered: dict[tuple[str, ...], tuple | None] = {}

    def propose_actions(self, context, k, planned=()):  # noqa: ANN001, ANN201 - the PlannerLLM signature
        self.offered[tuple(map(str, planned))] = context.choices
        return super().propose_actions(context, k, planned)


def test_with_grounding_each_expansion_is_offered_what_can_run_after_its_planned_steps():
    """react decodes its call from what can run now; MCTS's expansions are offered the same at the
    root (the agent's offer) and, below it, what can run in the state the planned steps lead to."""
    from dataclasses import replace

    s = setup()
    root_offer = (C("navigate_to(apple_1)"), C("navigate_to(fridge_1)"))
    llm = OfferRecordingLLM(scripted())
    planner = MCTSPlanner(llm, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, prune=True))
    planner.propose(replace(s.context(), offer=lambda: root_offer))
    assert llm.offered[()] == root_offer
    # after driving to the closed fridge, opening it is offered; driving there again (it changes
    # nothing), picking up the apple (out of reach) and done() (the goal is not met) are not
    after_drive = llm.offered[("navigate_to(fridge_1)",)]
    assert C("open(fridge_1)") in after_drive
    assert not {C("navigate_to(fridge_1)"), C("pick(apple_1)"), C("done()")} & set(after_drive)
    # grounding off (nothing offered at the root): nothing is offered below it either
    llm = OfferRecordingLLM(scripted())
    MCTSPlanner(llm, s.verifier, s.effects, MCTSConfig(expansions=3, branching=3, prune=True)).propose(s.context())
    assert set(llm.offered.values()) == {None}
