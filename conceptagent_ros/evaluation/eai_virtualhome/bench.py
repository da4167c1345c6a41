"""`conceptagent bench --suite eai-virtualhome`: every task of the benchmark through the grounded
loop (propose, check against the domain's preconditions by running it, feed the refusal back), scored
by the benchmark's own goals, with a report that names each unsolved task and why.
"""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from conceptagent_ros.atomic_files import write_atomic
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.bench import write_csv
from conceptagent_ros.evaluation.eai_virtualhome.adapter import example_bank
from conceptagent_ros.evaluation.eai_virtualhome.agents import (
    ChatProposer,
    Decision,
    OfflineProposer,
    Proposer,
    SimulatedProposer,
    Turn,
    fast_downward_plan,
)
from conceptagent_ros.evaluation.eai_virtualhome.formatting import share
from conceptagent_ros.evaluation.eai_virtualhome.judge import edge_fact, node_fact, score, script_name
from conceptagent_ros.evaluation.eai_virtualhome.planner_episode import run_planner_task
from conceptagent_ros.evaluation.eai_virtualhome.task_files import SUITE, EAITask, data_root, load_tasks, not_scorable
from conceptagent_ros.evaluation.eai_virtualhome.world import ActionOutcome, EAIWorld
from conceptagent_ros.evaluation.intervals import percent_interval, wilson
from conceptagent_ros.llm.spec import parse_llm_spec
from conceptagent_ros.planning.planners import PlannerSpec
from conceptagent_ros.planning.prompts import PlanExample

UNREACHABLE = "the goal is not reachable from the initial state under the domain"
PLANNER = "react"  # the grounded propose-execute-feedback loop
# Published task success on the benchmark's action-sequencing track (data/README.md): a reference only,
# measured in the benchmark's own VirtualHome simulator, not on this PDDL domain.
PUBLISHED = (("Mistral Large", 73.4), ("Gemini 1.5 Pro", 73.1), ("Claude-3.5 Sonnet", 72.8), ("o1-preview", 71.1),
             ("GPT-4o", 61.6), ("Llama-3-70B", 55.7), ("Llama-3-8B", 21.6), ("GPT-3.5-turbo", 14.7))
EPISODE_COLUMNS = ("task_id", "task_name", "planner", "llm", "seed", "success", "goal_recall", "node_goals",
                   "edge_goals", "action_goals", "steps", "executed", "refused", "blocked", "premature_done",
                   "malformed", "stop_reason", "llm_calls", "prompt_tokens", "completion_tokens", "planner_seconds",
                   "dropped_facts", "unmet", "why")


def make_proposer(llm: str, task: EAITask, seed: int, foreign: Sequence[str]) -> Proposer:
    spec = parse_llm_spec(llm)
    if spec.kind == "offline":
        return OfflineProposer()
    if spec.kind == "simulated":
        return SimulatedProposer(spec.simulated.errors, seed, task.id, foreign)
    if spec.chat:
        from conceptagent_ros.llm.chat_factory import open_chat_model

        return ChatProposer(open_chat_model(spec))
    raise ConceptAgentError(f"--llm {llm}: the EAI suite runs offline, simulated[:...], openai:MODEL or local[:NAME]")


def run_task(task: EAITask, root: Path, llm: str, seed: int, max_steps: int, foreign: Sequence[str],
             proposer: Proposer | None = None) -> dict[str, Any]:
    """One episode: at most `max_steps` decisions; ends when the proposer says done."""
    row: dict[str, Any] = {"suite": SUITE, "task_id": task.id, "task_name": task.task_name, "planner": PLANNER,
                           "llm": llm, "seed": seed}
    if (skipped := not_scorable(task, row)) is not None:
        return skipped
    world = EAIWorld(task, root)
    proposer = proposer or make_proposer(llm, task, seed, foreign)
    history: list[Turn] = []
    refused = malformed = 0
    stop = "max_steps"
    start = time.perf_counter()
    for _ in range(max_steps):
        decision: Decision = proposer.propose(world, history)
        if decision.error:
            malformed += 1
            history.append(Turn(None, ActionOutcome(False, f"unusable reply: {decision.error}")))
            continue
        if decision.call is None:
            stop = "done" if not decision.raw.startswith("no plan") else decision.raw
            break
        outcome = world.execute(decision.call)
        refused += not outcome.success
        history.append(Turn(decision.call, outcome))
    elapsed = time.perf_counter() - start
    result = score(task, world.holds, [c.action for c in world.executed])
    usage = proposer.usage
    row.update({
        "success": result.success, "scorable": True, "goal_recall": result.recall,
        "node_goals": f"{result.node_met}/{result.node_total}", "edge_goals": f"{result.edge_met}/{result.edge_total}",
        "action_goals": f"{result.action_met}/{result.action_total}", "unmet": list(result.unmet),
        "steps": len(history), "executed": len(world.executed), "refused": refused, "malformed": malformed,
        "stop_reason": stop, "llm_calls": usage.calls, "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "planner_seconds": max(0.0, elapsed - usage.seconds),
        "dropped_facts": len(world.dropped_facts), "actions": [str(t.call) for t in history],
        "errors_made": dict(getattr(proposer, "errors", {})),
    })
    if not result.success:
        row["why"] = explain_failure(task, root, row)
    return row


def explain_failure(task: EAITask, root: Path, row: dict[str, Any]) -> str:
    """Why a task was not solved: is its goal reachable at all from the initial state (Fast Downward),
    and if not, which of its parts is not reachable even alone."""
    world = EAIWorld(task, root)
    plan = fast_downward_plan(world)
    if plan.plan is not None:
        return (f"reachable in {len(plan.plan)} steps, but the episode ended ({row['stop_reason']}) "
                f"with {', '.join(row['unmet'])} unmet")
    if plan.status != "unsolvable":
        return f"no plan from the initial state: {plan.status}"
    parts = unreachable_parts(task, world)
    named = "; ".join(parts) if parts else "each part alone is reachable, not all of them together"
    return f"{UNREACHABLE}: {named}"


def unreachable_parts(task: EAITask, world: EAIWorld) -> list[str]:
    """The goals that no plan reaches even on their own, each with what the domain would need."""
    parts: list[str] = []
    for goal in task.node_goals:
        fact = node_fact(task, goal)
        if fast_downward_plan(world, facts=[fact], action_goals=()).plan is None:
            parts.append(f"{goal.state} {goal.class_name} ({_fact_text(fact)}{_adders(world, fact)})")
    for edge in task.edge_goals:
        maybe = edge_fact(task, edge)
        if maybe is None:
            parts.append(f"edge {edge.relation} has no predicate in the domain")
        elif fast_downward_plan(world, facts=[maybe], action_goals=()).plan is None:
            parts.append(f"{_fact_text(maybe)}{_adders(world, maybe)}")
    for alternatives in task.action_goals:
        if fast_downward_plan(world, facts=[], action_goals=[alternatives]).plan is None:
            names = [a for a in world.actions if script_name(a) in alternatives]
            why = (f"no reachable state satisfies the preconditions of {' or '.join(names)} for any object"
                   if names else "the domain has no such action")
            missing = [_missing_kind(world, name) for name in names]
            if names and all(missing):
                why += " (" + "; ".join(m for m in missing if m) + ")"
            parts.append(f"action {'|'.join(alternatives)}: {why}")
    return parts


def _missing_kind(world: EAIWorld, action_name: str) -> str:
    """A property every way of doing the action needs of its object, that no object here has and no
    action gives: "touch needs a readable object"."""
    action = world.problem.action(action_name)
    made = {e.fluent.fluent().name for a in world.problem.actions for e in a.effects if e.value.is_true()}  # type: ignore[attr-defined]
    for parameter in action.parameters:
        if parameter.type.name == "character":
            continue
        needed: set[str] = set()
        for condition in action.preconditions:  # type: ignore[attr-defined]
            needed |= _needed_of(condition, parameter.name)
        for predicate in sorted(needed - made):
            if not any(world.holds(predicate, (o,)) for o in world.objects):
                return f"{action_name} needs a {predicate} {parameter.name}, and nothing here is {predicate}"
    return ""


def _needed_of(node: Any, parameter: str) -> set[str]:
    """Unary predicates the formula needs of a parameter on every way of satisfying it."""
    if node.is_fluent_exp():
        args = node.args
        return {node.fluent().name} if len(args) == 1 and args[0].is_parameter_exp() \
            and args[0].parameter().name == parameter else set()
    if node.is_and():
        return set().union(*(_needed_of(a, parameter) for a in node.args))
    if node.is_or():
        branches = [_needed_of(a, parameter) for a in node.args]
        return set.intersection(*branches) if branches else set()
    return set()


def _fact_text(fact: tuple[str, tuple[str, ...]]) -> str:
    return "(" + " ".join([fact[0], *fact[1]]) + ")"


def _adders(world: EAIWorld, fact: tuple[str, tuple[str, ...]]) -> str:
    """What stands in the way of the actions that would make a fact true: their preconditions over the
    fact's objects that are false at the start and that no plan reaches on its own."""
    predicate, args = fact
    hints = []
    for action in world.problem.actions:
        for effect in action.effects:  # type: ignore[attr-defined]
            if effect.fluent.fluent().name != predicate or not effect.value.is_true():
                continue
            if not all(a.is_parameter_exp() for a in effect.fluent.args):
                continue
            binding = {a.parameter().name: value for a, value in zip(effect.fluent.args, args)}
            binding.update({p.name: "character" for p in action.parameters if p.type.name == "character"})
            blocked = [(name, atom_args) for name, atom_args in _false_preconditions(world, action, binding)
                       if name.startswith("not ") or fast_downward_plan(world, facts=[(name, atom_args)],
                                                                       action_goals=()).plan is None]
            texts = [f"{name}({', '.join(atom_args)})" for name, atom_args in blocked]
            hints.append(f"{action.name} needs {', '.join(texts)}, which no plan reaches" if texts else action.name)
    if not hints:
        return f"; no action makes {predicate} true"
    return "; made true by " + "; ".join(dict.fromkeys(hints))


def _false_preconditions(world: EAIWorld, action: Any, binding: dict[str, str]) -> list[tuple[str, tuple[str, ...]]]:
    """The action's top-level atomic preconditions over bound parameters that do not hold at the start
    (a negated one as "not NAME")."""
    false = []
    for condition in action.preconditions:
        for atom in condition.args if condition.is_and() else [condition]:
            negated = atom.is_not()
            inner = atom.arg(0) if negated else atom
            if not inner.is_fluent_exp() or not all(a.is_parameter_exp() and a.parameter().name in binding
                                                    for a in inner.args):
                continue
            ground = tuple(binding[a.parameter().name] for a in inner.args)
            if world.holds(inner.fluent().name, ground) == negated:
                false.append((("not " if negated else "") + inner.fluent().name, ground))
    return false


def foreign_objects(tasks: Sequence[EAITask]) -> dict[str, list[str]]:
    """Per task, class names that other tasks' homes have and this one's PDDL problem does not."""
    every = sorted({c for t in tasks for c in t.classes.values()})
    return {t.id: [c for c in every if c not in set(t.classes.values())] for t in tasks}


@dataclass
class EAIBenchConfig:
    llm: str = "offline"
    seeds: int = 1
    max_steps: int = 40
    task_ids: list[str] | None = None
    data: str | None = None
    out: Path | None = None
    # planner specs run through the household agent loop (adapter.py); none: the react loop of agents.py,
    # which also serves a chat model
    planners: list[str] = field(default_factory=list)


def run_eai_bench(config: EAIBenchConfig, stream: TextIO | None = None,
                  runner: Callable[..., dict[str, Any]] = run_task) -> list[dict[str, Any]]:
    stream = stream or sys.stderr
    parse_llm_spec(config.llm)  # a bad spec fails before any task
    specs = [PlannerSpec.parse(p) for p in config.planners]  # and a bad planner
    root = data_root(config.data)
    tasks = load_tasks(root, config.task_ids)
    foreign = foreign_objects(tasks)
    runners: list[tuple[str, Callable[..., dict[str, Any]]]] = [(PLANNER, runner)]
    if specs:
        # LLM-Planner's examples: the gold plans of the other tasks, of all of them when only some run
        bank = example_bank(load_tasks(root) if config.task_ids else tasks)
        runners = [(str(spec), _planner_runner(str(spec), bank)) for spec in specs]
    rows: list[dict[str, Any]] = []
    total, start = len(tasks) * config.seeds * len(runners), time.perf_counter()
    for label, run in runners:
        for seed in range(config.seeds):
            for task in tasks:
                try:
                    row = run(task, root, config.llm, seed, config.max_steps, foreign[task.id])
                except ConceptAgentError as e:
                    row = {"suite": SUITE, "task_id": task.id, "task_name": task.task_name, "planner": label,
                           "llm": config.llm, "seed": seed, "success": False, "scorable": True, "error": str(e),
                           "why": str(e)}
                rows.append(row)
                elapsed = time.perf_counter() - start
                eta = elapsed / len(rows) * (total - len(rows))
                mark = "ok  " if row.get("success") else ("skip" if not row.get("scorable") else "FAIL")
                stream.write(f"[{len(rows):>4}/{total}] {mark} {label[:30]:<30} {config.llm:<20} seed {seed} "
                             f"{task.id:<8} {task.task_name[:28]:<28} steps {row.get('steps', '-'):>3}  "
                             f"elapsed {elapsed:6.1f}s  eta {eta:6.1f}s\n")
                stream.flush()
    return rows


def _planner_runner(planner: str, bank: Sequence[PlanExample]) -> Callable[..., dict[str, Any]]:
    def run(task: EAITask, root: Path, llm: str, seed: int, max_steps: int, foreign: Sequence[str]) -> dict[str, Any]:
        row = run_planner_task(task, root, planner, llm, seed, max_steps, bank)
        if row.get("scorable") and not row.get("success"):
            row["why"] = explain_failure(task, root, row)
        return row

    return run


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in rows if r.get("scorable")]
    wins = sum(bool(r.get("success")) for r in scored)
    low, high = wilson(wins, len(scored)) if scored else (0.0, 0.0)

    def met(column: str) -> tuple[int, int]:
        pairs = [str(r.get(column, "0/0")).split("/") for r in scored]
        return sum(int(a) for a, _ in pairs), sum(int(b) for _, b in pairs)

    return {"llm": rows[0]["llm"] if rows else "", "episodes": len(rows), "scored": len(scored), "successes": wins,
            "success_rate": wins / len(scored) if scored else 0.0, "success_low": low, "success_high": high,
            "node_goals": met("node_goals"), "edge_goals": met("edge_goals"), "action_goals": met("action_goals"),
            "goal_recall": sum(r.get("goal_recall", 0.0) for r in scored) / len(scored) if scored else 0.0,
            "mean_steps": sum(r.get("steps", 0) for r in scored) / len(scored) if scored else 0.0,
            "refused": sum(r.get("refused", 0) for r in scored) / len(scored) if scored else 0.0,
            "not_scorable": [r["task_id"] for r in rows if not r.get("scorable")]}


def report(rows: Sequence[dict[str, Any]], command: str) -> str:
    if any(r.get("loop") == "agent" for r in rows):  # planners through the adapter: side by side
        from conceptagent_ros.evaluation.eai_virtualhome.planners_report import planners_report

        return planners_report(rows, command)
    s = summarize(rows)
    md = ["# Embodied Agent Interface: VirtualHome tasks", "",
          f"Command: `{command}`", "",
          "The benchmark's tasks (instruction, initial state, goals) run as worlds under its PDDL domain of 33 "
          "actions, stepped by unified-planning's simulator; every action is checked against the domain's "
          "preconditions when it runs, and a refusal comes back to the planner with the unsatisfied ones. "
          "Scored as the benchmark scores: node goals (object states), edge goals (relations) and action goals "
          "(actions done, in order). Code: `conceptagent_ros/evaluation/eai_virtualhome/`.", "",
          "| LLM | tasks scored | success [95% CI] | node goals met | edge goals met | action goals met "
          "| goal recall | steps | refused actions |", "|---|---|---|---|---|---|---|---|---|",
          f"| {s['llm']} | {s['scored']} | {s['success_rate']:.1%} {percent_interval(s['success_low'], s['success_high'])} "
          f"| {share(s['node_goals'])} | {share(s['edge_goals'])} | {share(s['action_goals'])} | {s['goal_recall']:.0%} "
          f"| {s['mean_steps']:.1f} | {s['refused']:.2f} |", ""]
    if s["not_scorable"]:
        md += [f"Not scorable ({len(s['not_scorable'])}): {', '.join(s['not_scorable'])}: the benchmark's data gives "
               "them no goal and no PDDL problem.", ""]
    if s["llm"].startswith("simulated"):
        md += ["## Beside the published figures", "",
               "Task success of LLM agents on the benchmark's action-sequencing track, as published (its own "
               "VirtualHome simulator, so a reference, not a like-for-like comparison), beside the simulated model "
               f"here ({s['llm']}; its parameters: config/llm_profiles.yaml, none tuned to these numbers):", "",
               "| agent | success |", "|---|---|",
               f"| simulated model here ({s['llm']}) | {s['success_rate']:.1%} |"]
        md += [f"| {name} (published) | {value:.1f}% |" for name, value in PUBLISHED] + [""]
        made: dict[str, int] = {}
        for r in rows:
            for kind, count in (r.get("errors_made") or {}).items():
                made[kind] = made.get(kind, 0) + count
        md += ["Errors the simulated model made, over all episodes: "
               + (", ".join(f"{k} {v}" for k, v in sorted(made.items())) or "none") + ". The profile's other "
               "kinds do not act here: every refusal on these worlds names its unsatisfied preconditions (so "
               "`repeat_unexplained` and the profile's unexplained-failure world never apply), the react loop has no "
               "critic or decider, and wrong beliefs (`misconception`, `relapse`) are not modelled on these worlds.",
               ""]
    failed = [r for r in rows if r.get("scorable") and not r.get("success")]
    unreachable = [r for r in failed if str(r.get("why", "")).startswith(UNREACHABLE)]
    reachable = s["scored"] - len(unreachable)
    md += [f"Goals reachable under the domain: {reachable} of {s['scored']} scored episodes; solved "
           f"{s['successes']} of those {reachable} ({s['successes'] / reachable:.1%}). The other "
           f"{len(unreachable)} ask for something no sequence of the domain's actions achieves from the task's "
           "initial state (listed below with the part that is unreachable even on its own)." if reachable else "", ""]
    md += [f"## Tasks not solved ({len(failed)})", ""]
    md += [f"- {r['task_id']} ({r.get('task_name', '')}, seed {r.get('seed', 0)}): {r.get('why', '')}" for r in failed]
    if not failed:
        md.append("None.")
    dropped = [r for r in rows if r.get("dropped_facts")]
    if dropped:
        md += ["", f"{len({r['task_id'] for r in dropped})} tasks' PDDL problems state facts that break the domain's "
               "typing (e.g. `(facing couch television)`); they are left out when the task is loaded, which no action "
               "can notice (see world.py)."]
    return "\n".join(md) + "\n"


def write_eai_results(out: Path, rows: Sequence[dict[str, Any]], command: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "results.json", json.dumps({"command": command, "summary": summarize(rows),
                                                   "episodes": list(rows)}, indent=2, default=str))
    write_csv(out / "episodes.csv", [{**r, "unmet": "; ".join(r.get("unmet", []))} for r in rows], EPISODE_COLUMNS)
    write_atomic(out / "README.md", report(rows, command))
