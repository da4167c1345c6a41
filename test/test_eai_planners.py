"""Every planner of the stack on Embodied Agent Interface's VirtualHome worlds, through the adapter
(evaluation/eai_virtualhome/adapter.py). The world is unified-planning's simulator on the benchmark's
domain and the judge scores the task's JSON goals; the planners read the domain through the household's
compiled verifier and effect model, so the two are checked against each other here."""
from __future__ import annotations

import json
import random

import pytest

from conceptagent_ros.cli import main
from conceptagent_ros.evaluation.eai_virtualhome.adapter import (
    EAIBelief,
    EAIOracle,
    EAIPlanningModel,
    example_bank,
)
from conceptagent_ros.evaluation.eai_virtualhome.planner_episode import run_planner_task
from conceptagent_ros.evaluation.eai_virtualhome.task_files import data_root, load_tasks
from conceptagent_ros.evaluation.eai_virtualhome.world import ActionCall, EAIWorld
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.planners import PlannerSpec
from conceptagent_ros.planning.proposal import DecisionContext
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.skills.contract import SkillCall

PLANNERS = ["react", "base", "mcts", "mcts:grounding=off,prune=off", "tree-planner", "llm-planner",
            "grounded-decoding"]


@pytest.fixture(scope="module")
def root():
    return data_root()


def task(root, task_id):
    return load_tasks(root, [task_id])[0]


@pytest.mark.parametrize("task_id", ["1027_2", "190_1", "341_1", "71_2"])
def test_the_planners_verifier_and_effects_agree_with_the_world_on_random_actions(root, task_id):
    """The belief after every action the world ran is what the effect model predicted, and the
    verifier calls feasible exactly the actions the world runs (wrongly typed ones included)."""
    world = EAIWorld(task(root, task_id), root)
    model = EAIPlanningModel.of(world)
    verifier = PreconditionVerifier(model.domain, model.skills)
    effects = EffectModel(model.domain)
    rng = random.Random(task_id)
    actions = sorted(world.actions.items())
    ran = refused = 0
    for _ in range(300):
        name, params = rng.choice(actions)
        # mostly the character where it belongs, sometimes anything anywhere
        args = tuple("character" if t == "character" and rng.random() < 0.9 else rng.choice(world.objects)
                     for _, t in params)
        call = SkillCall(name, args)
        before = model.state()
        feasible = verifier.is_feasible(call, before)
        assert verifier.verify(call, before).feasible == feasible
        outcome = world.execute(ActionCall(name, args))
        assert outcome.success == feasible, (call, outcome.message, verifier.verify(call, before).feedback())
        if outcome.success:
            ran += 1
            assert model.state().atoms == effects.apply(call, before).atoms, call
        else:
            refused += 1
            assert model.state().atoms == before.atoms
    assert ran > 20 and refused > 20


def test_action_goals_are_stage_facts_the_goal_waits_for(root):
    t = task(root, "21_2")  # Watch TV: ... then LOOKAT|WATCH
    assert t.action_goals
    world = EAIWorld(t, root)
    model = EAIPlanningModel.of(world)
    assert "eai_stage_" in model.goal.text
    assert ("eai_stage_0",) in model.state().atoms
    assert not model.goal.holds(model.state())


def test_the_oracle_plans_from_the_state_it_is_asked_about(root):
    world = EAIWorld(task(root, "1027_2"), root)  # Go to sleep
    model = EAIPlanningModel.of(world)
    oracle = EAIOracle(model, EffectModel(model.domain))
    belief = EAIBelief(model)

    def context(state):
        return DecisionContext("Go to sleep", model.goal, state, belief.describe(), belief, model.skills)

    first = oracle.propose(context(model.state()))
    assert first.call is not None and first.call.skill != "done"
    plan = oracle.remaining_plan
    assert oracle.plan_reaches_goal and plan[-1].skill == "sleep"
    # following the plan costs no new search; each step's state is the one it predicted
    for call in plan:
        assert oracle.propose(context(model.state())).call == call
        assert world.execute(ActionCall(call.skill, call.args)).success
    assert oracle.plans == 1
    assert oracle.propose(context(model.state())).call == SkillCall("done")


def test_the_belief_describes_properties_state_and_the_character(root):
    model = EAIPlanningModel.of(EAIWorld(task(root, "21_2"), root))
    text = EAIBelief(model).describe()
    assert "television:" in text and "has_switch" in text and "off" in text
    assert "Character:" in text and "Actions the task asks for, in order:" in text
    assert "eai_" not in text


@pytest.mark.parametrize("planner", PLANNERS)
def test_every_planner_solves_a_task_offline_judged_by_the_benchmark(root, planner):
    tasks = load_tasks(root)
    row = run_planner_task(task(root, "190_1"), root, planner, "offline", 0, 40, example_bank(tasks))
    assert row["success"], row
    assert row["planner"] == str(PlannerSpec.parse(planner))
    assert row["node_goals"] == "2/2" and row["executed"] >= 10


def test_with_grounding_an_infeasible_action_is_blocked_and_done_waits_for_the_goal(root):
    rates = "simulated:infeasible=0.4,premature_done=0.3"
    row = run_planner_task(task(root, "190_1"), root, "react", rates, 1, 60)
    assert row["success"], row
    assert row["blocked"] > 0 and row["refused"] == 0  # checked before they ran: none reached the world
    assert row["premature_done"] > 0


def test_without_grounding_the_world_refuses_and_an_early_done_ends_the_task(root):
    rows = [run_planner_task(task(root, "190_1"), root, "base", "simulated:infeasible=0.4,premature_done=0.3", s, 60)
            for s in range(4)]
    assert any(r["refused"] > 0 for r in rows)
    assert all(r["premature_done"] == 0 for r in rows)
    assert any(not r["success"] and r["stop_reason"] == "the agent declared the task done" for r in rows)


def test_simulated_runs_repeat_on_a_seed(root):
    a, b = (run_planner_task(task(root, "341_1"), root, "mcts", "simulated:realistic", 2, 40) for _ in range(2))
    assert a["actions"] == b["actions"] and a["llm_calls"] == b["llm_calls"] > 0


def test_llm_planner_retrieves_the_gold_plans_of_other_tasks(root):
    bank = example_bank(load_tasks(root))
    assert len(bank) > 100
    assert all(e.plan and e.source for e in bank)
    assert any(c.skill == "walk_towards" for e in bank for c in e.plan)


def test_bench_command_runs_planners_side_by_side_with_intervals(tmp_path, capsys):
    out = tmp_path / "eai"
    code = main(["bench", "--suite", "eai-virtualhome", "--planner", "react", "--planner", "tree-planner",
                 "--llm", "simulated:realistic", "--task", "1027_2", "--task", "137_2", "--out", str(out)])
    assert code == 0
    report = (out / "README.md").read_text()
    assert "| react | 2 |" in report and "| tree-planner | 2 |" in report
    assert "[" in report.split("| react | 2 |")[1].splitlines()[0]  # an interval
    assert "137_2" in report and "unreachable" in report
    assert "## The paper's ordering" in report
    data = json.loads((out / "results.json").read_text())
    assert {e["planner"] for e in data["episodes"]} == {"react", "tree-planner"}
    assert "tree-planner" in (out / "episodes.csv").read_text()
    assert "eta" in capsys.readouterr().err


def test_a_chat_model_on_a_local_server_runs_the_household_planner_on_an_eai_world(root, chat_server, monkeypatch):
    """The real openai client and the household's prompts: the model reads the benchmark's actions and
    the world's facts, a refused action comes back naming its unsatisfied precondition, and an early
    `done` is refused naming what is unmet."""
    server = chat_server(['{"thought": "sleep", "action": "sleep(character, bed)"}',
                          '{"action": "done()"}',
                          '{"action": "walk_towards(character, bed)"}',
                          '{"action": "lie(character, bed)"}',
                          '{"action": "sleep(character, bed)"}',
                          '{"action": "done()"}'])
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    row = run_planner_task(task(root, "1027_2"), root, "react", "openai:test-model", 0, 10)
    assert row["success"], row
    assert row["blocked"] == 1 and row["premature_done"] == 1 and row["llm_calls"] == 6
    prompts = [r["messages"][-1]["content"] for r in server.requests]  # the latest turn carries the feedback
    systems = server.requests[0]["messages"][0]["content"]
    assert "walk_towards(char, obj)" in systems and "bed:" in prompts[0]
    assert "(lying character) is false" in prompts[1]  # the refused sleep, with its cause
    assert "done() refused" in prompts[2]
