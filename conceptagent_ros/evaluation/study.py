"""`conceptagent study FILE --out DIR`: run the sections of a study file (planners x LLM backends x
suites x seeds), then write one Markdown report with tables, ratios and PNG plots, plus the JSON and
CSV of every episode. config/studies/planners.yaml made docs/benchmarks/."""
from __future__ import annotations

import hashlib
import json
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

from conceptagent_ros.atomic_files import write_atomic
from conceptagent_ros.errors import ConfigError
from conceptagent_ros.evaluation.bench import (
    SUMMARY_COLUMNS,
    BenchConfig,
    markdown_table,
    run_bench,
    summarize,
    write_data_files,
)
from conceptagent_ros.evaluation.intervals import separated
from conceptagent_ros.evaluation.journal import EpisodeJournal
from conceptagent_ros.evaluation.tasks import load_suite
from conceptagent_ros.llm.spec import load_profiles, parse_llm_spec
from conceptagent_ros.planning.planners import PlannerSpec
from conceptagent_ros.sim.world import WorldRealism

METRIC_LABELS = {
    "success_rate": "success rate", "goal_condition_recall": "goal-condition recall", "mean_steps": "steps",
    "infeasible_executed": "infeasible actions executed", "infeasible_proposed": "infeasible actions proposed",
    "corrections": "corrections per task", "llm_calls": "LLM calls per task", "llm_calls_per_action": "LLM calls per action",
    "tokens": "tokens per task", "planning_ms_per_decision": "planning ms per decision",
    "prompt_tokens": "prompt tokens per task", "unusable_replies": "unusable replies per task",
    "seconds_per_call": "seconds per LLM call", "seconds_per_task": "seconds per task",
}


@dataclass
class Section:
    id: str
    title: str
    planners: list[str]
    llms: list[str]
    suites: list[str]
    seeds: int = 1
    about: str = ""
    metrics: list[str] = field(default_factory=lambda: ["success_rate"])
    compare: dict[str, Any] | None = None
    max_steps: int = 40  # a task's own max_steps wins; a real model on CPU pays for every step
    # only these tasks of the suites (ids), where running them all costs too much: a planner that
    # takes ten minutes a task on a CPU runs on a sample chosen by position, not by outcome
    tasks: list[str] | None = None


SIMULATED_NOTE = (
    "The language model is the simulated backend (`--llm simulated:RATE` or a named profile of "
    "config/llm_profiles.yaml, see `conceptagent_ros/planning/oracles/simulated.py` for exactly what it models): "
    "it answers every role from the oracle and errs at the given rate. It measures how each planner copes with "
    "errors; its absolute success rates say nothing about any real model. Tokens are counted on the prompts a "
    "chat model would read. Planning time excludes the model's own time.\n")
REAL_NOTE = ("The language model is a real one (`local[:NAME]`: a fetched GGUF model served by llama.cpp on this "
             "machine's CPU; `openai:MODEL`: a server). Tokens are the server's own counts; seconds per call are "
             "wall-clock time of the requests.\n")


def _model_note(sections: list[Section]) -> list[str]:
    """What the report says of the language model: the simulated backend's caveat where it is used."""
    kinds = {llm.split(":", 1)[0].lower() for s in sections for llm in s.llms}
    modelled = {"simulated", "offline"}
    return ([SIMULATED_NOTE] if kinds & modelled else []) + ([REAL_NOTE] if kinds - modelled else [])


def load_study(path: Path) -> tuple[str, list[Section], dict[str, Any], str]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        sections = [Section(**s) for s in data.get("sections", [])]
    except (OSError, yaml.YAMLError, TypeError) as e:
        raise ConfigError(f"cannot read the study {path}: {e}") from e
    for s in sections:
        if s.tasks is not None:
            known = {t.id for name in s.suites for t in load_suite(name)}
            missing = [t for t in s.tasks if t not in known]
            if missing or not s.tasks:
                raise ConfigError(f"study section {s.id}: tasks {missing or '[]'} are not tasks of {', '.join(s.suites)}")
        for p in s.planners:
            PlannerSpec.parse(p)  # bad planner specs fail before hours of running
        unknown = [m for m in s.metrics if m not in SUMMARY_COLUMNS]
        if unknown:
            raise ConfigError(f"study section {s.id}: unknown metric(s) {unknown}; metrics: {', '.join(SUMMARY_COLUMNS)}")
    return str(data.get("title", path.stem)), sections, dict(data.get("overhead") or {}), str(data.get("reading", ""))


def study_fingerprint(sections: Sequence[Section], overhead: Mapping[str, Any]) -> dict[str, Any]:
    """What produced a study's episodes: the sections being run, as parsed, and the overhead
    settings. Titles, the sections' `about` and the reading are words about the results, and the
    other sections are other runs (a study of one section per planner reports each in its own
    folder), so changing them resumes from the journal instead of starting over."""
    # (a section with no task list fingerprints as before the list existed, so its journal resumes)
    relevant = {"overhead": dict(overhead),
                "sections": [{k: v for k, v in asdict(s).items()
                              if k not in ("title", "about") and not (k == "tasks" and v is None)} for s in sections]}
    digest = hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()
    return {"study": digest, "sections": [s.id for s in sections]}


def run_study(path: Path, out: Path, command: str, stream: TextIO | None = None,
              sections_only: Sequence[str] = (), resume: bool = True) -> Path:
    stream = stream or sys.stderr  # resolved per call: tests and tools swap sys.stderr
    title, sections, overhead_cfg, reading = load_study(path)
    if sections_only:
        sections = [s for s in sections if s.id in sections_only]
    journal = EpisodeJournal(out, study_fingerprint(sections, overhead_cfg), resume=resume)
    if journal.done:
        stream.write(f"Resuming: {len(journal.done)} episodes already in {journal.path}\n")
    started = time.perf_counter()
    md = [f"# {title}\n", f"Made by `{command}` ({time.strftime('%Y-%m-%d')}, {platform.machine()}, "
          f"Python {platform.python_version()}). Every figure below comes from the files beside this report: "
          "`episodes.csv` (one row per episode), `summary.csv`, `results.json`.\n",
          "Success rates carry 95% Wilson score intervals (evaluation/intervals.py); each section says "
          "which arms differ, and a difference is claimed only where the intervals do not overlap.\n",
          *_model_note(sections)]
    all_rows: list[dict[str, Any]] = []
    for section in sections:
        stream.write(f"== {section.id}: {section.title}\n")
        tasks = [t for name in section.suites for t in load_suite(name)
                 if section.tasks is None or t.id in section.tasks]
        rows: list[dict[str, Any]] = []
        for llm in section.llms:
            config = BenchConfig(planners=[str(PlannerSpec.parse(p)) for p in section.planners], llm=llm,
                                 seeds=section.seeds, max_steps=section.max_steps)
            rows += run_bench(tasks, config, stream, journal=journal, extra={"section": section.id})
        for r in rows:
            r["section"] = section.id
        all_rows += rows
        summary = summarize(rows)
        md += [f"## {section.title}\n", " ".join(section.about.split()) + "\n", *profiles_used(section.llms),
               markdown_table(summary), "", differences(summary), ""]
        if section.compare:
            md += [_comparison(summary, section.compare), ""]
        image = _plot(section, summary, out / f"{section.id}.png")
        if image:
            md += [f"![{section.title}]({image.name})\n"]
    if overhead_cfg:
        md += _overhead(overhead_cfg, stream)
    summary_all = summarize(all_rows)
    write_data_files(out, all_rows, summary_all, command, lead_columns=("section",))
    if reading:
        md += ["## Reading these results\n", reading_text(reading)]
    # the episodes' own time, not this invocation's: a resumed or report-only run took seconds
    episodes_time = sum(float(row.get("wall_seconds", 0.0)) for row in all_rows)
    md.append(f"\nEpisodes' run time {episodes_time:.0f} s in all (this invocation {time.perf_counter() - started:.0f} s).\n")
    report = out / "README.md"
    write_atomic(report, "\n".join(md))
    return report


def reading_text(reading: str) -> str:
    """The study file's `reading:` paragraphs (what the simulated model can and cannot show)."""
    return "\n\n".join(" ".join(p.split()) for p in reading.split("\n\n") if p.strip()) + "\n"


def profiles_used(llms: Sequence[str]) -> list[str]:
    """The parameters of each named simulated profile a section ran (the report says what it used)."""
    lines = []
    profiles = load_profiles()
    for llm in llms:
        spec = parse_llm_spec(llm)
        if spec.kind == "simulated" and spec.model in profiles:
            profile = profiles[spec.model]
            lines.append(f"Profile `{llm}` (config/llm_profiles.yaml): model errors {profile.errors}; "
                         f"world {WorldRealism.from_settings(profile.world_settings)}.\n")
    return lines


def differences(summary: list[dict[str, Any]]) -> str:
    """Which arms' success rates differ, per LLM and suite: only where the 95% Wilson intervals do
    not overlap; every other pair is listed as not shown to differ."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in summary:
        groups.setdefault((row["llm"], row["suite"]), []).append(row)
    lines = ["What the intervals support (success, 95% Wilson intervals; a difference is claimed only "
             "where they do not overlap):", ""]
    for (llm, suite), rows in sorted(groups.items()):
        rows = sorted(rows, key=lambda r: -r["success_rate"])
        apart: list[str] = []
        close: list[str] = []
        for i, a in enumerate(rows):
            for b in rows[i + 1:]:
                pair = (f"{a['planner']} {a['success_rate']:.0%} > {b['planner']} {b['success_rate']:.0%}"
                        if separated((a["success_low"], a["success_high"]), (b["success_low"], b["success_high"]))
                        else f"{a['planner']} ~ {b['planner']}")
                (apart if ">" in pair else close).append(pair)
        lines.append(f"- {suite}, {llm}: differ: {'; '.join(apart) or 'none'}. "
                     f"Not shown to differ: {'; '.join(close) or 'none'}.")
    return "\n".join(lines)


def _comparison(summary: list[dict[str, Any]], compare: dict[str, Any]) -> str:
    """`tree-planner` against each of `against`, per LLM and suite: relative change of each metric."""
    ours = compare["planner"]
    lines = ["| against | LLM | suite | " + " | ".join(f"{m} (Δ)" for m in compare["metrics"]) + " |",
             "|" + "---|" * (3 + len(compare["metrics"]))]
    index = {(s["planner"], s["llm"], s["suite"]): s for s in summary}
    for other in compare["against"]:
        for (planner, llm, suite), row in sorted(index.items()):
            if planner != ours or (other, llm, suite) not in index:
                continue
            base = index[(other, llm, suite)]
            cells = []
            for m in compare["metrics"]:
                cells.append(f"{(row[m] - base[m]) / base[m]:+.0%}" if base[m] else "n/a")
            lines.append(f"| {other} | {llm} | {suite} | " + " | ".join(cells) + " |")
    return f"Change of **{ours}** against each baseline (negative: fewer):\n\n" + "\n".join(lines)


def _plot(section: Section, summary: list[dict[str, Any]], path: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    planners = list(dict.fromkeys(s["planner"] for s in summary))
    groups = list(dict.fromkeys((s["llm"], s["suite"]) for s in summary))
    index = {(s["planner"], s["llm"], s["suite"]): s for s in summary}
    fig, axes = plt.subplots(1, len(section.metrics), figsize=(4.2 * len(section.metrics), 3.6), squeeze=False)
    width = 0.8 / max(1, len(groups))
    for ax, metric in zip(axes[0], section.metrics):
        for g, (llm, suite) in enumerate(groups):
            values = [index.get((p, llm, suite), {}).get(metric, 0.0) for p in planners]
            errors = None
            if metric == "success_rate":  # the 95% Wilson interval as the error bar
                rows = [index.get((p, llm, suite), {}) for p in planners]
                errors = [[v - r.get("success_low", v) for v, r in zip(values, rows)],
                          [r.get("success_high", v) - v for v, r in zip(values, rows)]]
            ax.bar([i + g * width for i in range(len(planners))], values, width, label=f"{suite}, {llm}",
                   yerr=errors, capsize=2)
        ax.set_xticks([i + width * (len(groups) - 1) / 2 for i in range(len(planners))])
        ax.set_xticklabels([p.replace(":", ":\n").replace(",", ",\n") for p in planners], fontsize=7)
        ax.set_title(METRIC_LABELS.get(metric, metric), fontsize=9)
        if metric in ("success_rate", "goal_condition_recall"):
            ax.set_ylim(0, 1)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(section.title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _overhead(cfg: dict[str, Any], stream: TextIO) -> list[str]:
    from conceptagent_ros.evaluation.planning_overhead import measure

    objects = int(cfg.get("objects", 200))
    latency = float(cfg.get("llm_seconds_per_call", 0.5))
    lines = ["## Planning overhead outside the language model\n",
             f"Per decision on a scene of {objects} objects (`conceptagent overhead`), simulated backend "
             f"without errors; its own time is excluded as a model's latency would be; each decision's "
             f"fastest of 3 runs counts (where the runs made the same decisions; else the fastest run whole). The target is "
             f"below 10% of the LLM time at {latency:g} s a call.\n",
             "| planner | objects | overhead ms / decision | LLM calls / decision | overhead / LLM time | overhead / one call |",
             "|---|---|---|---|---|---|"]
    for planner in cfg.get("planners", ["mcts:expansions=20"]):
        r = measure(planner, objects, llm_seconds_per_call=latency, stream=stream)
        stream.write(r.line() + "\n")
        lines.append(f"| {r.planner} | {r.objects} | {r.overhead_ms_per_decision:.1f} | {r.llm_calls_per_decision:.1f} "
                     f"| {r.ratio:.2%} | {r.ratio_one_call:.1%} |")
    return lines + [""]
