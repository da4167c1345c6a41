"""What `bench --body pybullet` adds to the results: the physical run beside the symbolic run of the
same tasks, failures by skill and error code, the failed tasks grouped by cause with their
pictures, the tasks that failed on the body but not in the symbolic world with the reason, and a
picture per task.

Rows are bench rows (evaluation/bench.py): an episode's EpisodeResult.to_json() with its suite;
`skill_failures` holds every executed call that failed as "skill:KIND"."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conceptagent_ros.evaluation.intervals import percent_interval, wilson

PICTURES = "pictures"  # the folder under --out that holds a picture per task


def picture_name(planner: str, seed: int, task_id: str) -> str:
    return f"{planner}-s{seed}-{task_id}.png".replace(":", "_").replace("=", "-").replace(",", "_")


def failures_by_skill(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    """(skill, error code or failure kind, failed calls, episodes it happened in), most frequent first."""
    calls: Counter[tuple[str, str]] = Counter()
    episodes: Counter[tuple[str, str]] = Counter()
    for row in rows:
        seen = Counter(tuple(f.split(":", 1)) for f in row.get("skill_failures", []) if ":" in f)
        calls.update(seen)  # type: ignore[arg-type]
        episodes.update(seen.keys())  # type: ignore[arg-type]
    return sorted(((skill, kind, n, episodes[(skill, kind)]) for (skill, kind), n in calls.items()),
                  key=lambda r: (-r[2], r[0], r[1]))


def why_failed(row: dict[str, Any]) -> str:
    """One line: the error, else the skills' failures (each kind once, with how often) and the unmet
    goal; why the episode stopped only where no skill failed (a step budget used up, say)."""
    if row.get("error"):
        return str(row["error"])
    counted = Counter(row.get("skill_failures", []))
    parts = [f"{kind} x{n}" if n > 1 else kind for kind, n in counted.items()]
    unmet = ", ".join(row.get("unmet", []))
    stop = "" if parts else row.get("stats", {}).get("stop_reason", "")
    return "; ".join(p for p in (", ".join(parts), f"unmet {unmet}" if unmet else "", stop) if p)


def cause(row: dict[str, Any]) -> str:
    """What an episode failed by: the skill failure it met most often (the later of a tie: the one
    that ended it), else why it stopped, else its error."""
    failures = list(row.get("skill_failures", []))
    if failures:
        counted = Counter(failures)
        most = max(counted.values())
        return next(f for f in reversed(failures) if counted[f] == most)
    if row.get("error"):
        return "error"
    return str(row.get("stats", {}).get("stop_reason") or "goal not met")


def failures_by_cause(rows: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The failed episodes grouped by cause, the most frequent cause first."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if not row.get("success"):
            groups.setdefault(cause(row), []).append(row)
    return sorted(groups.items(), key=lambda g: (-len(g[1]), g[0]))


def _key(row: dict[str, Any]) -> tuple[str, str, int, str]:
    return str(row.get("suite")), str(row.get("planner")), int(row.get("seed", 0)), str(row.get("task_id"))


def comparison_rows(physical: Sequence[dict[str, Any]], symbolic: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (suite, planner) and body: episodes, successes with interval, steps, seconds per task.
    As in bench.summarize, a task whose goal the body judges on its own flags (symbolic_goal) is no
    physical success: it is left out of both bodies' rows, so they compare the same tasks."""
    apart = {_key(r) for r in physical if r.get("symbolic_goal")}
    out = []
    for body, rows in (("pybullet", physical), ("symbolic", symbolic)):
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in rows:
            if _key(row) not in apart:
                groups.setdefault((str(row.get("suite")), str(row.get("planner"))), []).append(row)
        for (suite, planner), items in sorted(groups.items()):
            wins = sum(bool(r.get("success")) for r in items)
            low, high = wilson(wins, len(items))
            out.append({"suite": suite, "planner": planner, "body": body, "episodes": len(items), "successes": wins,
                        "success_low": low, "success_high": high,
                        "mean_steps": sum(r.get("stats", {}).get("steps", 0) for r in items) / len(items),
                        "seconds_per_task": sum(r.get("wall_seconds", 0.0) for r in items) / len(items)})
    return sorted(out, key=lambda r: (r["suite"], r["planner"], r["body"]))


def body_markdown(physical: Sequence[dict[str, Any]], symbolic: Sequence[dict[str, Any]], out: Path | None) -> str:
    lines = ["## The body beside the symbolic world", "",
             "| suite | planner | body | episodes | success [95% CI] | steps | seconds per task |",
             "|---|---|---|---|---|---|---|"]
    for r in comparison_rows(physical, symbolic):
        lines.append(f"| {r['suite']} | {r['planner']} | {r['body']} | {r['episodes']} | "
                     f"{r['successes']}/{r['episodes']} = {r['successes'] / r['episodes']:.0%} "
                     f"{percent_interval(r['success_low'], r['success_high'])} | {r['mean_steps']:.1f} "
                     f"| {r['seconds_per_task']:.1f} |")
    lines += ["", "## Failures on the body by skill and error code", ""]
    table = failures_by_skill(physical)
    if table:
        lines += ["| skill | error | failed calls | episodes |", "|---|---|---|---|"]
        lines += [f"| {skill} | {kind} | {n} | {episodes} |" for skill, kind, n, episodes in table]
    else:
        lines.append("No skill failed.")
    by_cause = failures_by_cause(physical)
    if by_cause:
        lines += ["", "## Failures by cause", ""]
        for name, rows in by_cause:
            lines += [f"### {name} ({len(rows)} episode{'s' if len(rows) > 1 else ''})", ""]
            for r in rows:
                lines.append(f"- {r.get('task_id')} ({r.get('scene', '')}, seed {r.get('seed')}): {why_failed(r)}")
            pictured = [(r, picture_name(str(r.get("planner")), int(r.get("seed", 0)), str(r.get("task_id"))))
                        for r in rows]
            shown = [(r, p) for r, p in pictured if out is not None and (out / PICTURES / p).exists()]
            if shown:
                lines += [""] + [f"![{r.get('task_id')}]({PICTURES}/{p})" for r, p in shown]
            lines.append("")
    judged_apart = [r for r in physical if r.get("symbolic_goal")]
    if judged_apart:
        lines += ["", "## Left out: goals the body judges on its own flags", "",
                  "These goals need a predicate no physical quantity stands for on this body (the declared effect "
                  "of a skill it has no physical model of), so they are in no figure above:", ""]
        lines += [f"- {r.get('task_id')} ({', '.join(r['symbolic_goal'])}): "
                  f"{'reached on the flags' if r.get('success') else 'not reached'}" for r in judged_apart]
    symbolic_won = {_key(r) for r in symbolic if r.get("success")}
    only_symbolic = [r for r in physical if not r.get("success") and _key(r) in symbolic_won]
    lines += ["", "## Failed on the body, succeeded in the symbolic world", ""]
    lines += [f"- {r.get('task_id')} ({r.get('scene', '')}, seed {r.get('seed')}): {why_failed(r)}" for r in only_symbolic] \
        or ["None."]
    if out is not None and (out / PICTURES).is_dir():
        lines += ["", "## Pictures (the base's path and the final scene, from above; the goal's things in red)", ""]
        for r in physical:
            name = picture_name(str(r.get("planner")), int(r.get("seed", 0)), str(r.get("task_id")))
            if (out / PICTURES / name).exists():
                mark = "ok" if r.get("success") else "FAIL"
                lines.append(f"- [{r.get('task_id')} seed {r.get('seed')} ({mark})]({PICTURES}/{name})")
    return "\n".join(lines)
