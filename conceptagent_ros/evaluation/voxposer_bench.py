"""VoxPoser's per-template bench (`conceptagent bench --suite voxposer`, and through the trajectory
node's action in ros/bench/voxposer_node_bench.py): seeded episodes of each task template, judged
by the template's ground-truth check on the PyBullet tabletop, written as Markdown and CSV."""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from conceptagent_ros.voxposer.api import WORKER_RUNNER
from conceptagent_ros.voxposer.sandbox import Sandbox
from conceptagent_ros.voxposer.session import make_writer, run_on_tabletop
from conceptagent_ros.voxposer.task_templates import IMPLEMENTED, TEMPLATES, TabletopTask, make_task


@dataclass(frozen=True)
class Judged:
    """One template episode as a bench records it, however it ran (in-process or through the node)."""

    passed: bool  # the template's ground-truth judge
    executor_success: bool
    replans: int
    replan_hz: float
    why: str  # the judge's verdict, or the executor's message when it failed


def run_templates(templates: Sequence[int], episodes: int, seen: bool, run_one: Callable[[int, int, TabletopTask], Judged],
                  out: TextIO = sys.stdout) -> tuple[dict[int, tuple[int, int]], list[dict[str, object]]]:
    """Success per template (0-based indices) over `episodes` seeded episodes each, each episode run by
    `run_one(template index, seed, task)`; prints a line per episode and per template as it goes and
    returns the counts and the rows."""
    import time

    results: dict[int, tuple[int, int]] = {}
    rows: list[dict[str, object]] = []
    for index in templates:
        template = TEMPLATES[index]
        if index not in IMPLEMENTED:
            print(f"{index + 1:>2}. {template:<75} not modelled", file=out, flush=True)
            continue
        wins = 0
        for seed in range(episodes):
            task = make_task(index, seed, seen=seen)
            began = time.perf_counter()
            judged = run_one(index, seed, task)
            wins += judged.passed
            rows.append({"template": index + 1, "seed": seed, "instruction": task.instruction,
                         "success": int(judged.passed), "executor_success": int(judged.executor_success),
                         "replans": judged.replans, "replan_hz": round(judged.replan_hz, 1),
                         "seconds": round(time.perf_counter() - began, 1), "verdict": judged.why})
            print(f"    [{seed + 1}/{episodes}] {'ok  ' if judged.passed else 'FAIL'} {task.instruction}: {judged.why}",
                  file=out, flush=True)
        results[index] = (wins, episodes)
        print(f"{index + 1:>2}. {template:<75} {wins}/{episodes}", file=out, flush=True)
    return results, rows


def bench_voxposer(episodes: int, llm: str = "offline", seen: bool = True, out: TextIO = sys.stdout,
                   templates: list[int] | None = None, out_dir: Path | None = None) -> dict[int, tuple[int, int]]:
    """Success per template (0-based indices; all by default) over `episodes` seeded episodes each;
    prints a table as it goes and, with `out_dir`, writes voxposer.md and voxposer_episodes.csv there."""
    writer = make_writer(llm)
    with Sandbox(WORKER_RUNNER) as box:
        def run_one(_index: int, _seed: int, task: TabletopTask) -> Judged:
            episode = run_on_tabletop(task.instruction, task.scene, writer, judge=task.judge, sandbox=box)
            report = episode.report
            return Judged(episode.judged, report.success, len(report.replans), report.replan_hz,
                          episode.verdict if report.success else report.message)
        results, rows = run_templates(range(len(TEMPLATES)) if templates is None else templates, episodes, seen,
                                      run_one, out)
    if out_dir is not None:
        write_bench_files(out_dir, results, rows, llm, seen)
    return results


def write_bench_files(out_dir: Path, results: dict[int, tuple[int, int]], rows: list[dict[str, object]], llm: str,
                      seen: bool, name: str = "voxposer", via: str = "") -> None:
    """NAME.md (the table and the failed episodes) and NAME_episodes.csv (one row per episode).

    An earlier run's episodes in the same place (same attributes and --llm) are kept for the
    templates this run did not run, so templates can be rerun one at a time."""
    import csv

    out_dir.mkdir(parents=True, exist_ok=True)
    rows, results = _merge_earlier(out_dir, name, rows, bench_markdown({}, [], llm, seen, via).splitlines()[0])
    with open(out_dir / f"{name}_episodes.csv", "w", newline="", encoding="utf-8") as f:
        table = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["template"])
        table.writeheader()
        table.writerows(rows)
    (out_dir / f"{name}.md").write_text(bench_markdown(results, rows, llm, seen, via), encoding="utf-8")


def _merge_earlier(out_dir: Path, name: str, rows: list[dict[str, object]],
                  title: str) -> tuple[list[dict[str, object]], dict[int, tuple[int, int]]]:
    import csv

    report, table = out_dir / f"{name}.md", out_dir / f"{name}_episodes.csv"
    kept: list[dict[str, object]] = []
    if report.is_file() and table.is_file() and report.read_text(encoding="utf-8").splitlines()[:1] == [title]:
        ran = {r["template"] for r in rows}
        with open(table, newline="", encoding="utf-8") as f:
            for old in csv.DictReader(f):
                row: dict[str, object] = dict(old)
                for key in ("template", "seed", "success", "executor_success", "replans"):
                    row[key] = int(str(row[key]))
                if row["template"] not in ran:
                    kept.append(row)
    merged = sorted(kept + list(rows), key=lambda r: (int(str(r["template"])), int(str(r["seed"]))))
    results: dict[int, tuple[int, int]] = {}
    for row in merged:
        wins, n = results.get(int(str(row["template"])) - 1, (0, 0))
        results[int(str(row["template"])) - 1] = (wins + int(str(row["success"])), n + 1)
    return merged, results


PAPER_SUCCESS = (90, 95, 100, 80, 65, 65, 60, 50, 100, 85, 85, 45, 80)  # VoxPoser's Table 4, seen attributes


def bench_markdown(results: dict[int, tuple[int, int]], rows: list[dict[str, object]], llm: str, seen: bool,
                   via: str = "") -> str:
    lines = [f"# VoxPoser on the PyBullet tabletop{' ' + via if via else ''} "
             f"({'seen' if seen else 'unseen'} attributes, --llm {llm})", "",
             "| # | template | success | paper (seen, LLM) | mean replan Hz | mean s/episode |",
             "|---|---|---|---|---|---|"]
    for index, (wins, n) in sorted(results.items()):
        mine = [r for r in rows if r["template"] == index + 1]
        hz = sum(float(str(r["replan_hz"])) for r in mine) / max(1, len(mine))
        seconds = sum(float(str(r["seconds"])) for r in mine) / max(1, len(mine))
        lines.append(f"| {index + 1} | {TEMPLATES[index]} | {wins}/{n} ({100 * wins / max(1, n):.0f}%) | "
                     f"{PAPER_SUCCESS[index]}% | {hz:.1f} | {seconds:.1f} |")
    failures = [r for r in rows if not r["success"]]
    if failures:
        lines += ["", "## Failed episodes", ""]
        lines += [f"- template {r['template']}, seed {r['seed']}: \"{r['instruction']}\" -- {r['verdict']}" for r in failures]
    return "\n".join(lines) + "\n"
