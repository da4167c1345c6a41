"""`conceptagent bench`: run planners over task suites and seeds; print a table; write JSON, CSV and
Markdown results. Planning time is the episode's wall time minus the language model's own time."""
from __future__ import annotations

import csv
import io
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from conceptagent_ros.atomic_files import write_atomic
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.body_report import PICTURES, picture_name
from conceptagent_ros.evaluation.episode import EpisodeResult, EpisodeSpec, run_episode
from conceptagent_ros.evaluation.goal_equivalence import translation_verdict
from conceptagent_ros.evaluation.intervals import percent_interval, wilson
from conceptagent_ros.evaluation.journal import EpisodeJournal, episode_key
from conceptagent_ros.evaluation.tasks import Task


@dataclass
class BenchConfig:
    planners: Sequence[str] = ("react",)
    llm: str = "offline"
    seeds: int = 1
    max_steps: int = 40
    failure_rates: dict[str, float] | None = None
    out: Path | None = None
    # Goals translated from the instructions (the task's goal is only the judge's): scored as goal
    # right or wrong beside success, so a misread instruction and a failed execution stay apart.
    translate: bool = False
    perception: str = "truth"  # "camera": the agent sees through the synthetic RGB-D camera and the fused map
    # "pybullet": a body in PyBullet does the skills (evaluation/episode.py); with `out`, a picture per task
    body: str = "symbolic"
    gui: bool = False  # the body in PyBullet's window
    sensing: str = "ideal"  # a physical body's senses, resolved by the caller (bodies/sensing.body_sensing)

    def fingerprint(self, tasks: Sequence[Task]) -> dict[str, Any]:
        """What must match for a rerun to resume from an earlier run's episodes."""
        return {"planners": list(self.planners), "llm": self.llm, "seeds": self.seeds, "max_steps": self.max_steps,
                "failure_rates": dict(sorted((self.failure_rates or {}).items())),
                "tasks": [f"{t.suite}/{t.id}" for t in tasks], **({"translate": True} if self.translate else {}),
                **({"perception": self.perception} if self.perception != "truth" else {}),
                **({"body": self.body} if self.body != "symbolic" else {}),
                **({"sensing": self.sensing} if self.body != "symbolic" and self.sensing != "ideal" else {})}


KEY_FIELDS = ("section", "llm", "planner", "seed", "suite", "task_id")


def run_bench(tasks: Sequence[Task], config: BenchConfig, stream: TextIO | None = None,
              runner: Callable[[EpisodeSpec], EpisodeResult] = run_episode,
              journal: EpisodeJournal | None = None, extra: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every (planner, seed, task) episode; with a journal, each is written as it finishes and
    those already in it are not run again. `extra` fields (a study's section) go into each row."""
    stream = stream or sys.stderr  # resolved per call: tests and tools swap sys.stderr
    extra = extra or {}
    rows: list[dict[str, Any]] = []
    total = len(tasks) * len(config.planners) * config.seeds
    done = 0
    resumed = 0
    start = time.perf_counter()
    for planner in config.planners:
        for seed in range(config.seeds):
            for task in tasks:
                key = episode_key({**extra, "llm": config.llm, "planner": planner, "seed": seed, "suite": task.suite,
                                   "task_id": task.id}, KEY_FIELDS)
                earlier = journal.get(key) if journal is not None else None
                if earlier is not None:
                    rows.append(earlier)
                    done += 1
                    resumed += 1
                    continue
                spec = EpisodeSpec.of(
                    instruction=task.instruction, scene=task.scene, goal=None if config.translate else task.goal,
                    judge_goal=task.goal if config.translate else None, planner=planner,
                    llm=config.llm, seed=seed, max_steps=task.max_steps or config.max_steps,
                    failure_rates={**task.failures, **(config.failure_rates or {})}, task_id=task.id,
                    trace=(config.out / "traces" / f"{planner}-s{seed}-{task.id}.jsonl") if config.out else None,
                    perception=config.perception, body=config.body, gui=config.gui, sensing=config.sensing,
                    picture=(config.out / PICTURES / picture_name(planner, seed, task.id))
                    if config.out and config.body == "pybullet" else None,
                )
                try:
                    result = runner(spec)
                    row = {"suite": task.suite, **result.to_json()}
                    if config.translate:
                        row["goal_right"] = translation_verdict(task.scene, result.goal, task.goal).label
                except ConceptAgentError as e:
                    row = {"suite": task.suite, "task_id": task.id, "planner": planner, "llm": config.llm, "seed": seed,
                           "success": False, "error": str(e)}
                    if config.translate:  # refused before the first step: the instruction was not understood
                        row["goal_right"] = "refused"
                row.update(extra)
                if journal is not None:
                    journal.record(key, row)
                rows.append(row)
                done += 1
                elapsed = time.perf_counter() - start
                eta = elapsed / max(1, done - resumed) * (total - done)
                mark = "ok  " if row.get("success") else "FAIL"
                calls = int(row.get("llm_calls", 0) or 0)
                per_call = f"  {row.get('llm_seconds', 0.0) / calls:5.2f} s/call" if calls else ""
                stream.write(f"[{done:>4}/{total}] {mark} {planner:<24} {config.llm:<16} seed {seed} {task.id:<12} "
                             f"steps {row.get('stats', {}).get('steps', '-'):>3}{per_call}  "
                             f"elapsed {elapsed:6.1f}s  eta {eta:6.1f}s\n")
                stream.flush()
    return rows


def corrections(row: dict[str, Any]) -> int:
    """Decisions spent recovering from an error: refused, failed or unusable actions."""
    stats = row.get("stats", {})
    return int(stats.get("failed_executions", 0) + stats.get("infeasible_proposed", 0)
               - stats.get("infeasible_executed", 0) + stats.get("invalid_proposals", 0)
               + stats.get("malformed_replies", 0))


SUMMARY_COLUMNS = ("planner", "llm", "suite", "episodes", "successes", "success_rate", "success_low", "success_high",
                   "goal_condition_recall", "mean_steps",
                   "infeasible_proposed", "infeasible_executed", "corrections", "llm_calls", "llm_calls_per_action",
                   "prompt_tokens", "completion_tokens", "tokens", "planning_seconds", "planning_ms_per_decision",
                   "unusable_replies", "seconds_per_call", "seconds_per_task", "errors", "goals_right", "goals_wrong",
                   "goals_refused", "success_given_right_goal", "symbolic_goal_episodes", "symbolic_goal_successes")


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row.get("planner", "?"), row.get("llm", "?"), row.get("suite", "?")), []).append(row)
    summary = []
    for (planner, llm, suite), everything in sorted(groups.items()):
        # A physical body judges some predicates on its own flags (a symbolic effect): a task whose
        # goal needs one is counted apart, never as a physical success
        items = [r for r in everything if not r.get("symbolic_goal")]
        apart = [r for r in everything if r.get("symbolic_goal")]
        n = len(items)
        per = max(n, 1)  # a group of goals all judged apart has no physical figures: zeros, over no episodes
        stats = [r.get("stats", {}) for r in items]
        executed = sum(s.get("executed", 0) for s in stats)
        decisions = sum(s.get("steps", 0) for s in stats)
        calls = sum(r.get("llm_calls", 0) for r in items)
        prompt = sum(r.get("prompt_tokens", 0) for r in items)
        completion = sum(r.get("completion_tokens", 0) for r in items)
        seconds = sum(r.get("planner_seconds", 0.0) for r in items)
        llm_seconds = sum(r.get("llm_seconds", 0.0) for r in items)
        wins = sum(bool(r.get("success")) for r in items)
        low, high = wilson(wins, n)
        summary.append({
            "planner": planner, "llm": llm, "suite": suite, "episodes": n, "successes": wins,
            "success_rate": wins / per, "success_low": low, "success_high": high,
            "goal_condition_recall": sum(r.get("goal_progress", 0.0) for r in items) / per,
            "mean_steps": decisions / per,
            "infeasible_proposed": sum(s.get("infeasible_proposed", 0) for s in stats) / per,
            "infeasible_executed": sum(s.get("infeasible_executed", 0) for s in stats) / per,
            "corrections": sum(corrections(r) for r in items) / per,
            "llm_calls": calls / per,
            "llm_calls_per_action": calls / executed if executed else 0.0,
            "prompt_tokens": prompt / per, "completion_tokens": completion / per, "tokens": (prompt + completion) / per,
            "planning_seconds": seconds / per,
            "planning_ms_per_decision": 1000 * seconds / decisions if decisions else 0.0,
            # replies the parser could not turn into a call (0 wherever a schema held the model)
            "unusable_replies": sum(s.get("malformed_replies", 0) for s in stats) / per,
            "seconds_per_call": llm_seconds / calls if calls else 0.0,  # the model's own time per call
            "seconds_per_task": sum(r.get("wall_seconds", 0.0) for r in items) / per,
            "errors": sum(1 for r in items if "error" in r),
        })
        if apart:
            summary[-1].update({"symbolic_goal_episodes": len(apart),
                                "symbolic_goal_successes": sum(bool(r.get("success")) for r in apart),
                                "symbolic_goal_tasks": sorted({str(r.get("task_id")) for r in apart})})
        verdicts = [str(r["goal_right"]) for r in items if "goal_right" in r]
        if verdicts:
            right = [r for r in items if str(r.get("goal_right", "")).startswith("right")]
            summary[-1].update({
                "goals_right": len(right), "goals_wrong": verdicts.count("wrong"), "goals_refused": verdicts.count("refused"),
                "success_given_right_goal": sum(bool(r.get("success")) for r in right) / len(right) if right else 0.0,
            })
    return summary


def markdown_table(summary: Sequence[dict[str, Any]]) -> str:
    head = ("| planner | LLM | suite | episodes | success [95% CI] | goal-condition recall | steps | infeasible proposed "
            "| infeasible executed | corrections | LLM calls | calls / action | prompt tokens | completion tokens "
            "| planning ms / decision | unusable replies | s / call | s / task |")
    lines = [head, "|" + "---|" * 18]
    for s in summary:
        lines.append(
            f"| {s['planner']} | {s['llm']} | {s['suite']} | {s['episodes']} | {s['success_rate']:.0%} "
            f"{percent_interval(s['success_low'], s['success_high'])} "
            f"| {s['goal_condition_recall']:.0%} | {s['mean_steps']:.1f} | {s['infeasible_proposed']:.2f} "
            f"| {s['infeasible_executed']:.2f} | {s['corrections']:.2f} | {s['llm_calls']:.1f} "
            f"| {s['llm_calls_per_action']:.1f} | {s['prompt_tokens']:.0f} | {s['completion_tokens']:.0f} "
            f"| {s['planning_ms_per_decision']:.1f} | {s.get('unusable_replies', 0.0):.2f} "
            f"| {s.get('seconds_per_call', 0.0):.2f} | {s.get('seconds_per_task', 0.0):.1f} |"
        )
    apart = [s for s in summary if s.get("symbolic_goal_episodes")]
    if apart:
        lines += ["", "Not in the figures above: tasks whose goal needs a predicate the body judges on its own flags "
                  "(the declared effect of a skill it has no physical model of), not on physics:", ""]
        lines += [f"- {s['planner']} / {s['suite']}: {s['symbolic_goal_successes']}/{s['symbolic_goal_episodes']} "
                  f"reached their goal that way ({', '.join(s['symbolic_goal_tasks'])})" for s in apart]
    translated = [s for s in summary if "goals_right" in s]
    if translated:
        lines += ["", "Goals translated from the instructions, judged against each task's goal on its scene "
                  "(same meaning, not same text):", "",
                  "| planner | LLM | suite | episodes | goal right | goal wrong | refused | success "
                  "| success when the goal was right |",
                  "|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {s['planner']} | {s['llm']} | {s['suite']} | {s['episodes']} | {s['goals_right']} | {s['goals_wrong']} "
                  f"| {s['goals_refused']} | {s['success_rate']:.0%} | {s['success_given_right_goal']:.0%} |"
                  for s in translated]
    return "\n".join(lines)


EPISODE_COLUMNS = ("suite", "task_id", "planner", "llm", "seed", "success", "goal_progress", "steps", "executed",
                   "infeasible_proposed", "infeasible_executed", "corrections", "llm_calls", "prompt_tokens",
                   "completion_tokens", "planner_seconds", "llm_seconds", "wall_seconds", "stop_reason", "error", "goal",
                   "goal_right", "symbolic_goal")


def episode_record(row: dict[str, Any]) -> dict[str, Any]:
    stats = row.get("stats", {})
    flat = {k: row.get(k, "") for k in EPISODE_COLUMNS}
    flat.update({k: stats.get(k, "") for k in ("steps", "executed", "infeasible_proposed", "infeasible_executed",
                                                "stop_reason")})
    flat["corrections"] = corrections(row)
    flat["symbolic_goal"] = " ".join(row.get("symbolic_goal") or ())
    return flat


def write_csv(path: Path, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    write_atomic(path, buffer.getvalue())


def write_data_files(out: Path, rows: Sequence[dict[str, Any]], summary: Sequence[dict[str, Any]], command: str,
                     lead_columns: Sequence[str] = ()) -> None:
    """results.json, episodes.csv (with `lead_columns` of each row first) and summary.csv."""
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "results.json", json.dumps({"command": command, "episodes": list(rows),
                                                   "summary": list(summary)}, indent=2, default=str))
    write_csv(out / "episodes.csv", [{**episode_record(r), **{c: r.get(c, "") for c in lead_columns}} for r in rows],
              (*lead_columns, *EPISODE_COLUMNS))
    write_csv(out / "summary.csv", summary, SUMMARY_COLUMNS)


def write_results(out: Path, rows: Sequence[dict[str, Any]], summary: Sequence[dict[str, Any]], command: str,
                  appendix: str = "") -> None:
    """results.json, the CSVs and results.md; `appendix`: more Markdown sections for results.md."""
    write_data_files(out, rows, summary, command)
    failures = [r for r in rows if not r.get("success")]
    md = [f"# Benchmark results\n\nCommand: `{command}`\n", markdown_table(summary), ""]
    if failures:
        md.append("## Failed episodes\n")
        for r in failures:
            md.append(f"- {r.get('planner')} seed {r.get('seed')} {r.get('task_id')}: "
                      f"{r.get('error') or 'unmet: ' + ', '.join(r.get('unmet', []))}")
    if appendix:
        md += ["", appendix]
    write_atomic(out / "results.md", "\n".join(md) + "\n")
