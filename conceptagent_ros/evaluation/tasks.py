"""Task files (DESIGN.md): YAML with `tasks:`, each {id, scene, instruction, goal} and optional
max_steps and failures. Built-in suites live in config/tasks/<suite>.yaml."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from conceptagent_ros.errors import TaskFileError
from conceptagent_ros.paths import config_dir


@dataclass(frozen=True)
class Task:
    id: str
    scene: str
    instruction: str
    goal: str
    suite: str = ""
    max_steps: int | None = None
    failures: dict[str, float] = field(default_factory=dict)
    notes: str = ""


def list_suites() -> list[str]:
    return sorted(p.stem for p in (config_dir() / "tasks").glob("*.yaml"))


def load_suite(name: str) -> list[Task]:
    path = config_dir() / "tasks" / f"{name}.yaml"
    if not path.is_file():
        raise TaskFileError(f"unknown suite '{name}'; built-in suites are: {', '.join(list_suites())}")
    return load_tasks(path, suite=name)


def only_tasks(tasks: list[Task], ids: list[str] | None, source: str) -> list[Task]:
    """The tasks named in `ids` (all where none is named), in their order; an id that none of them
    has is an error naming `source` (the suites or files they came from), not a run of nothing."""
    if not ids:
        return tasks
    unknown = sorted(set(ids) - {t.id for t in tasks})
    if unknown:
        raise TaskFileError(f"no task {', '.join(unknown)} in {source}")
    return [t for t in tasks if t.id in set(ids)]


def load_tasks(path: str | Path, suite: str | None = None) -> list[Task]:
    path = Path(path)
    if not path.is_file():
        raise TaskFileError(f"task file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise TaskFileError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list) or not data["tasks"]:
        raise TaskFileError(f"{path}: a task file is a mapping with a non-empty list `tasks:`")
    tasks: list[Task] = []
    seen: set[str] = set()
    for i, raw in enumerate(data["tasks"]):
        where = f"{path}: tasks[{i}]"
        if not isinstance(raw, dict):
            raise TaskFileError(f"{where}: each task is a mapping with id, scene, instruction, goal")
        missing = [k for k in ("id", "scene", "instruction", "goal") if not raw.get(k)]
        if missing:
            raise TaskFileError(f"{where}: missing {', '.join(missing)}")
        task_id = str(raw["id"])
        if task_id in seen:
            raise TaskFileError(f"{where}: duplicate task id '{task_id}'")
        seen.add(task_id)
        scene = str(raw["scene"])
        scene_path = (path.parent / scene) if scene.endswith((".yaml", ".yml")) and not Path(scene).is_absolute() else None
        tasks.append(Task(
            id=task_id, scene=str(scene_path) if scene_path and scene_path.is_file() else scene,
            instruction=str(raw["instruction"]), goal=" ".join(str(raw["goal"]).split()),
            suite=suite or str(data.get("name", path.stem)), max_steps=_opt_int(raw.get("max_steps"), where),
            failures={str(k): float(v) for k, v in (raw.get("failures") or {}).items()}, notes=str(raw.get("notes", "")),
        ))
    return tasks


def _opt_int(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or value <= 0:
        raise TaskFileError(f"{where}: max_steps must be a positive integer")
    return value
