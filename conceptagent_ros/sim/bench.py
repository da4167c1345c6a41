"""`conceptagent bench`: run planners over task suites and seeds; print a table; write JSON and
Markdown results."""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.sim.episode import EpisodeResult, EpisodeSpec, run_episode
from conceptagent_ros.sim.tasks import Task


@dataclass
class BenchConfig:
    planners: Sequence[str] = ("react",)
    llm: str = "offline"
    seeds: int = 1
    max_steps: int = 40
    failure_rates: dict[str, float] | None = None
    out: Path | None = None


def run_bench(tasks: Sequence[Task], config: BenchConfig, stream: TextIO = sys.stderr,
              runner: Callable[[EpisodeSpec], EpisodeResult] = run_episode) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    total = len(tasks) * len(config.planners) * config.seeds
    done = 0
    start = time.perf_counter()
    for planner in config.planners:
        for seed in range(config.seeds):
            for task in tasks:
                spec = EpisodeSpec(
                    instruction=task.instruction, scene=task.scene, goal=task.goal, planner=planner,
                    llm=config.llm, seed=seed, max_steps=task.max_steps or config.max_steps,
                    failure_rates={**task.failures, **(config.failure_rates or {})}, task_id=task.id,
                    trace=(config.out / "traces" / f"{planner}-s{seed}-{task.id}.jsonl") if config.out else None,
                )
                try:
                    result = runner(spec)
                    row = {"suite": task.suite, **result.to_json()}
                except ConceptAgentError as e:
                    row = {"suite": task.suite, "task_id": task.id, "planner": planner, "seed": seed,
                           "success": False, "error": str(e)}
                rows.append(row)
                done += 1
                elapsed = time.perf_counter() - start
                eta = elapsed / done * (total - done)
                mark = "ok  " if row.get("success") else "FAIL"
                stream.write(f"[{done:>4}/{total}] {mark} {planner:<10} seed {seed} {task.id:<14} "
                             f"steps {row.get('stats', {}).get('steps', '-'):>3}  "
                             f"elapsed {elapsed:6.1f}s  eta {eta:6.1f}s\n")
                stream.flush()
    return rows


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row.get("planner", "?"), row.get("suite", "?")), []).append(row)
    summary = []
    for (planner, suite), items in sorted(groups.items()):
        n = len(items)
        stats = [r.get("stats", {}) for r in items]
        summary.append({
            "planner": planner, "suite": suite, "episodes": n,
            "success_rate": sum(bool(r.get("success")) for r in items) / n,
            "mean_steps": sum(s.get("steps", 0) for s in stats) / n,
            "infeasible_proposed": sum(s.get("infeasible_proposed", 0) for s in stats) / n,
            "infeasible_executed": sum(s.get("infeasible_executed", 0) for s in stats) / n,
            "llm_calls": sum(r.get("llm_calls", 0) for r in items) / n,
            "tokens": sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in items) / n,
            "planning_seconds": sum(r.get("planner_seconds", 0.0) for r in items) / n,
            "errors": sum(1 for r in items if "error" in r),
        })
    return summary


def markdown_table(summary: Sequence[dict[str, Any]]) -> str:
    head = ("| planner | suite | episodes | success | steps | infeasible proposed | infeasible executed "
            "| LLM calls | tokens | planning s |")
    lines = [head, "|" + "---|" * 10]
    for s in summary:
        lines.append(
            f"| {s['planner']} | {s['suite']} | {s['episodes']} | {s['success_rate']:.0%} | {s['mean_steps']:.1f} "
            f"| {s['infeasible_proposed']:.2f} | {s['infeasible_executed']:.2f} | {s['llm_calls']:.1f} "
            f"| {s['tokens']:.0f} | {s['planning_seconds']:.2f} |"
        )
    return "\n".join(lines)


def write_results(out: Path, rows: Sequence[dict[str, Any]], summary: Sequence[dict[str, Any]], command: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"command": command, "episodes": list(rows),
                                                  "summary": list(summary)}, indent=2, default=str))
    failures = [r for r in rows if not r.get("success")]
    md = [f"# Benchmark results\n\nCommand: `{command}`\n", markdown_table(summary), ""]
    if failures:
        md.append("## Failed episodes\n")
        for r in failures:
            md.append(f"- {r.get('planner')} seed {r.get('seed')} {r.get('task_id')}: "
                      f"{r.get('error') or 'unmet: ' + ', '.join(r.get('unmet', []))}")
    (out / "results.md").write_text("\n".join(md) + "\n")
