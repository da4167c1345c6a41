"""The report of `bench --suite eai-virtualhome --planner ...`: every planner on the benchmark's worlds,
side by side with intervals, and whether ConceptAgent's ordering (its full agent, MCTS with grounding,
first) holds here."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conceptagent_ros.evaluation.eai_virtualhome.bench import UNREACHABLE, summarize
from conceptagent_ros.evaluation.eai_virtualhome.formatting import share
from conceptagent_ros.evaluation.intervals import percent_interval

FULL_AGENT = "mcts"  # ConceptAgent's full agent: MCTS with precondition grounding


def by_planner(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row.get("planner", "")), []).append(row)
    return groups


def _mean(rows: Sequence[dict[str, Any]], key: str) -> float:
    return sum(float(r.get(key, 0) or 0) for r in rows) / len(rows) if rows else 0.0


def planner_figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in rows if r.get("scorable")]
    s = summarize(scored)
    executed = sum(int(r.get("executed", 0) or 0) for r in scored)
    calls = sum(int(r.get("llm_calls", 0) or 0) for r in scored)
    unreachable = sum(1 for r in scored if not r.get("success") and str(r.get("why", "")).startswith(UNREACHABLE))
    return {**s, "calls_per_action": calls / executed if executed else 0.0,
            "tokens": _mean(scored, "prompt_tokens") + _mean(scored, "completion_tokens"),
            "blocked": _mean(scored, "blocked"), "premature": _mean(scored, "premature_done"),
            "reachable": s["scored"] - unreachable}


def planners_report(rows: Sequence[dict[str, Any]], command: str) -> str:
    groups = by_planner(rows)
    figures = {name: planner_figures(group) for name, group in groups.items()}
    llm = rows[0]["llm"] if rows else ""

    md = ["# Embodied Agent Interface: every planner on the VirtualHome tasks", "",
          f"Command: `{command}`", "",
          "Each planner of the stack runs the benchmark's tasks through the household's own agent loop "
          "(`planning/agent.py`), over an adapter from an EAI world to the planners' interface "
          "(`conceptagent_ros/evaluation/eai_virtualhome/adapter.py`): the benchmark's PDDL domain as the skills' "
          "preconditions and effects, the world's facts as the belief, the world as the robot. With grounding on, "
          "every action is checked against the domain's preconditions before it runs (refused ones come back "
          "naming what does not hold) and `done` is refused while the task's PDDL goal does not hold; with "
          "grounding off the action runs, and the world refuses it the same way, as these worlds do (a refused "
          "action changes nothing here: nothing is irreversible). Scored by the benchmark's own goals from the "
          "task's JSON (node, edge and action goals), by a judge that shares no code with the planners.", "",
          f"The model: `{llm}`. The simulated model answers from Fast Downward on the task (the oracle) and errs "
          "at its profile's rates (config/llm_profiles.yaml, unchanged for this benchmark): invented objects, "
          "infeasible and out-of-order actions, early `done`, loops, repeated refused actions and wrong beliefs "
          "(a container that opens believed open, planned on until feedback names it). The other wrong belief, "
          "one object taken for another of its kind, cannot arise here: the benchmark's problems hold one object "
          "per class.", "",
          "| planner | tasks | success [95% CI] | reachable solved | node goals | edge goals | action goals "
          "| goal recall | steps | infeasible proposed | refused by the world | early done refused "
          "| LLM calls per action | tokens per task |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, f in figures.items():
        reachable = f"{f['successes']}/{f['reachable']} ({f['successes'] / f['reachable']:.0%})" if f["reachable"] else "-"
        md.append(f"| {name} | {f['scored']} | {f['success_rate']:.1%} "
                  f"{percent_interval(f['success_low'], f['success_high'])} | {reachable} | {share(f['node_goals'])} "
                  f"| {share(f['edge_goals'])} | {share(f['action_goals'])} | {f['goal_recall']:.0%} "
                  f"| {f['mean_steps']:.1f} | {f['blocked']:.2f} | {f['refused']:.2f} | {f['premature']:.2f} "
                  f"| {f['calls_per_action']:.1f} | {f['tokens']:.0f} |")
    md += ["", "Steps count every decision (refused ones included). Per task: actions proposed whose "
           "preconditions did not hold (with grounding, none of them ran), actions the world refused (run without "
           "grounding, or its check passed where the world's did not), and `done` refused before the goal held. "
           "\"Reachable solved\": of the tasks whose goal some sequence of the domain's actions reaches from the "
           "initial state (Fast Downward), how many were solved.", ""]
    beliefs = {name: sum(1 for r in group if any(k.startswith("misconception") for k in (r.get("errors_made") or {})))
               for name, group in groups.items()}
    if any(beliefs.values()):
        md += ["Episodes that started with a wrong belief (the same draws for every arm that reads the model's "
               "roles; Grounded Decoding's token mixture does not report its own): "
               + ", ".join(f"{name} {count}" for name, count in beliefs.items()) + ".", ""]
    md += _ordering(figures)
    md += ["", "## Tasks not solved, by planner", ""]
    for name, group in groups.items():
        failed = [r for r in group if r.get("scorable") and not r.get("success")]
        solvable = [r for r in failed if not str(r.get("why", "")).startswith(UNREACHABLE)]
        unreachable = sorted({str(r["task_id"]) for r in failed if r not in solvable})
        md.append(f"- **{name}**: {len(failed)} ({len(unreachable)} unreachable under the domain: "
                  f"{', '.join(unreachable) or 'none'})")
        md += [f"  - {r['task_id']} ({r.get('task_name', '')}, seed {r.get('seed', 0)}): {r.get('why', '')}"
               for r in solvable]
    return "\n".join(md) + "\n"


def _ordering(figures: dict[str, dict[str, Any]]) -> list[str]:
    """Whether the full agent is the best arm, in words from the figures (the intervals say how sure)."""
    if not figures:
        return []
    ranked = sorted(figures.items(), key=lambda item: (-item[1]["success_rate"], item[1]["mean_steps"]))
    order = ""
    for i, (name, f) in enumerate(ranked):
        if i:
            order += " = " if f["success_rate"] == ranked[i - 1][1]["success_rate"] else " > "
        order += f"{name} {f['success_rate']:.1%} ({f['mean_steps']:.1f} steps)"
    lines = ["## The paper's ordering", "", f"By success, ties by fewer steps: {order}."]
    full = figures.get(FULL_AGENT)
    if full is not None:
        best_name, best = ranked[0]
        overlapping = [name for name, f in ranked if name != FULL_AGENT and f["success_high"] >= full["success_low"]
                       and f["success_low"] <= full["success_high"]]
        if best_name == FULL_AGENT or best["success_rate"] == full["success_rate"]:
            verdict = "MCTS with grounding (ConceptAgent's full agent) is the best arm here, or tied for it"
        else:
            verdict = (f"MCTS with grounding (ConceptAgent's full agent) is not the best arm here: {best_name} "
                       f"succeeds on {best['success_rate']:.1%} against its {full['success_rate']:.1%}")
        lines.append(f"{verdict}; the arms whose intervals overlap its own: {', '.join(overlapping) or 'none'}.")
    ceiling = [name for name, f in ranked if f["reachable"] and f["successes"] == f["reachable"]]
    if ceiling:
        lines.append(f"{', '.join(ceiling)} solve every task whose goal is reachable under the domain: for them the "
                     "ceiling is the benchmark's domain, not the planner, and the arms differ in steps and in "
                     "model calls, not in success.")
    return lines
