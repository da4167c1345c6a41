"""One EAI task run by any planner of the stack (`bench --suite eai-virtualhome --planner P`): the
household's agent loop over the adapted task (adapter.py), scored by the benchmark's judge."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conceptagent_ros.evaluation.eai_virtualhome.adapter import (
    EAI_WORDS,
    EAIBelief,
    EAIOracle,
    EAIPlanningModel,
    EAIRobot,
)
from conceptagent_ros.evaluation.eai_virtualhome.judge import score
from conceptagent_ros.evaluation.eai_virtualhome.task_files import SUITE, EAITask, not_scorable
from conceptagent_ros.evaluation.eai_virtualhome.world import EAIWorld
from conceptagent_ros.llm.spec import parse_llm_spec
from conceptagent_ros.planning.agent import Agent, AgentConfig
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.planners import PlannerSpec, build_planner
from conceptagent_ros.planning.planners.registry import SimulatedWorld
from conceptagent_ros.planning.prompts import PlanExample
from conceptagent_ros.planning.verifier import PreconditionVerifier


def run_planner_task(task: EAITask, root: Path, planner: str, llm: str, seed: int, max_steps: int,
                     examples: Sequence[PlanExample] = ()) -> dict[str, Any]:
    """One episode: the planner decides, the agent checks (with grounding) and runs each action on the
    world, until `done` (refused while the goal does not hold, where grounding is on) or the budget."""
    spec = PlannerSpec.parse(planner)
    llm_spec = parse_llm_spec(llm)
    row: dict[str, Any] = {"suite": SUITE, "task_id": task.id, "task_name": task.task_name, "planner": str(spec),
                           "llm": llm, "seed": seed, "loop": "agent"}
    if (skipped := not_scorable(task, row)) is not None:
        return skipped
    world = EAIWorld(task, root)
    model = EAIPlanningModel.of(world)
    effects = EffectModel(model.domain)
    oracle = EAIOracle(model, effects)
    built = build_planner(spec, llm_spec, model.domain, model.skills, seed, task.id,
                          world=SimulatedWorld(oracle, EAI_WORDS), examples=tuple(examples) or None)
    belief = EAIBelief(model)
    config = AgentConfig(max_steps=max_steps, precondition_grounding=built.grounding, check_done=built.grounding)
    agent = Agent(built.proposer, PreconditionVerifier(model.domain, model.skills), model.skills, EAIRobot(world), belief, config)
    stats = agent.run(f"{task.task_name}. {task.instruction}", model.goal)
    result = score(task, world.holds, [c.action for c in world.executed])
    usage = built.proposer.usage
    row.update({
        "success": result.success, "scorable": True, "goal_recall": result.recall,
        "node_goals": f"{result.node_met}/{result.node_total}", "edge_goals": f"{result.edge_met}/{result.edge_total}",
        "action_goals": f"{result.action_met}/{result.action_total}", "unmet": list(result.unmet),
        "steps": stats.steps, "executed": stats.executed, "refused": stats.failed_executions,
        "blocked": stats.infeasible_proposed, "malformed": stats.malformed_replies,
        "premature_done": stats.premature_done, "stop_reason": stats.stop_reason,
        "llm_calls": usage.calls, "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
        "llm_calls_per_action": usage.calls / stats.executed if stats.executed else float(usage.calls),
        "planner_seconds": max(0.0, stats.planning_seconds - usage.seconds),
        "oracle_plans": oracle.plans, "dropped_facts": len(world.dropped_facts),
        "actions": [str(c) for c in world.executed], "errors_made": _errors_made(built.proposer),
    })
    if not result.success:
        row["why"] = f"{stats.stop_reason}; unmet: {', '.join(result.unmet)}"
    return row


def _errors_made(proposer: Any) -> dict[str, int]:
    """The simulated model's wrong belief, if it held one (its other errors are not counted by kind)."""
    llm = getattr(proposer, "llm", None) or getattr(proposer, "roles", None)
    m = getattr(llm, "misconception", None)
    return {f"misconception: {m.kind}": 1} if m is not None else {}
