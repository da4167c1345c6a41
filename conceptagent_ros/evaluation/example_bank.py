"""Record an example bank for LLM-Planner: each task's instruction with the plan the offline
backend executed for it. `conceptagent examples --suite easy --suite moderate --suite hard`
wrote config/examples/plan_bank.yaml; retrieval leaves each task's own example out."""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import yaml

from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode
from conceptagent_ros.evaluation.tasks import Task
from conceptagent_ros.planning.agent import StepReport


def record_plans(tasks: Sequence[Task], stream: TextIO | None = None) -> list[dict[str, object]]:
    stream = stream or sys.stderr  # resolved per call: tests and tools swap sys.stderr
    examples: list[dict[str, object]] = []
    for i, task in enumerate(tasks, 1):
        executed: list[str] = []

        def keep(report: StepReport, executed: list[str] = executed) -> None:
            if report.executed and report.record.success and report.record.call is not None:
                executed.append(str(report.record.call))

        result = run_episode(EpisodeSpec.of(task.instruction, scene=task.scene, goal=task.goal, planner="react", llm="offline",
                                         max_steps=task.max_steps or 40, task_id=task.id), on_step=keep)
        stream.write(f"[{i}/{len(tasks)}] {task.id}: {'ok' if result.success else 'FAILED, left out'}\n")
        if result.success:
            examples.append({"source": task.id, "instruction": task.instruction, "plan": executed + ["done()"]})
    return examples


def write_bank(examples: list[dict[str, object]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    header = "# LLM-Planner example bank, recorded by `conceptagent examples` (offline backend).\n"
    out.write_text(header + yaml.safe_dump({"examples": examples}, sort_keys=False, width=200), encoding="utf-8")
