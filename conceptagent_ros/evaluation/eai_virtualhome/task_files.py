"""Reads the benchmark's files as tasks: instruction, goals as the benchmark states them, the PDDL problem.

Layout (the benchmark's own, see data/eai_virtualhome/README.md): `tasks/<id>.json` and
`pddl/virtualhome.pddl` plus `pddl/problems/<Task>/<id>.pddl`. The shipped copy (the package's
data/eai_virtualhome, paths.data_dir) holds the 171 public tasks; point `--eai-data` or
CONCEPTAGENT_EAI_DATA at another folder of the same layout to run other tasks.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.paths import data_dir

DOMAIN_FILE = Path("pddl") / "virtualhome.pddl"


class EAIDataError(ConceptAgentError):
    """The benchmark folder is missing or a task file is malformed."""


@dataclass(frozen=True)
class NodeGoal:
    node: int
    class_name: str
    state: str  # ON, OFF, OPEN, CLOSED, PLUGGED_IN, SITTING, LYING, ...


@dataclass(frozen=True)
class EdgeGoal:
    source: int
    relation: str  # ON, INSIDE, CLOSE, FACING, HOLDS_RH, HOLDS_LH
    target: int


@dataclass(frozen=True)
class EAITask:
    id: str
    task_name: str
    instruction: str
    node_goals: tuple[NodeGoal, ...]
    edge_goals: tuple[EdgeGoal, ...]
    action_goals: tuple[tuple[str, ...], ...]  # in order; each item's alternatives ("RINSE|WASH")
    problem: Path | None  # None: the benchmark gives this task no PDDL problem
    character: int
    classes: dict[int, str] = field(repr=False)  # node id -> class name (the task-relevant graph)
    categories: dict[int, str] = field(repr=False)  # node id -> category (Rooms, Furniture, ...)
    gold_program: tuple[str, ...] = ()
    gold_plan: tuple[str, ...] | None = None  # "grab character pot" lines, where the benchmark has one

    @property
    def has_goal(self) -> bool:
        return bool(self.node_goals or self.edge_goals or self.action_goals)


SUITE = "eai-virtualhome"


def not_scorable(task: EAITask, row: dict[str, Any]) -> dict[str, Any] | None:
    """The episode's row when the task cannot be run and scored at all (the data gives it no goal and
    no PDDL problem); None when it can."""
    if task.has_goal and task.problem is not None:
        return None
    return {**row, "success": False, "scorable": False, "stop_reason": "not scorable",
            "why": "the benchmark's data gives this task no goal and no PDDL problem"}


def data_root(override: str | Path | None = None) -> Path:
    root = Path(override or os.environ.get("CONCEPTAGENT_EAI_DATA") or data_dir() / "eai_virtualhome")
    if not (root / DOMAIN_FILE).is_file() or not (root / "tasks").is_dir():
        raise EAIDataError(f"{root} is not an Embodied Agent Interface VirtualHome folder: it needs {DOMAIN_FILE} "
                           "and tasks/ (see data/eai_virtualhome/README.md)")
    return root


def domain_path(root: Path) -> Path:
    return root / DOMAIN_FILE


def load_task(path: Path, root: Path) -> EAITask:
    try:
        raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        goal = raw.get("goal") or {}
        nodes = raw["init_graph_relevant"]["nodes"]
        problem = raw.get("pddl_problem")
        return EAITask(
            id=str(raw["id"]), task_name=str(raw.get("task_name", "")), instruction=str(raw.get("instruction", "")),
            node_goals=tuple(NodeGoal(int(g["id"]), str(g["class_name"]), str(g["state"]).upper())
                             for g in goal.get("node_goals") or []),
            edge_goals=tuple(EdgeGoal(int(g["from_id"]), str(g["relation_type"]).upper(), int(g["to_id"]))
                             for g in goal.get("edge_goals") or []),
            action_goals=tuple(tuple(a.strip().upper() for a in str(item).split("|"))
                               for item in goal.get("action_goals") or []),
            problem=(root / problem) if problem else None,
            character=int(raw.get("character_id", 65)),
            classes={int(n["id"]): str(n["class_name"]) for n in nodes},
            categories={int(n["id"]): str(n.get("category", "")) for n in nodes},
            gold_program=tuple(raw.get("gold_program") or ()),
            gold_plan=tuple(raw["gold_pddl_plan"]) if raw.get("gold_pddl_plan") else None,
        )
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise EAIDataError(f"{path}: not a task file of the benchmark: {e}") from e


def load_tasks(root: Path, ids: list[str] | None = None) -> list[EAITask]:
    """Every task of the folder, in id order; `ids` picks some (an unknown id is an error)."""
    files = {p.stem: p for p in (root / "tasks").glob("*.json")}
    if ids:
        unknown = [i for i in ids if i not in files]
        if unknown:
            raise EAIDataError(f"no task {', '.join(unknown)} in {root / 'tasks'}")
        chosen = ids
    else:
        chosen = sorted(files, key=_id_order)
    return [load_task(files[i], root) for i in chosen]


def _id_order(task_id: str) -> tuple[int, int, str]:
    head, _, tail = task_id.partition("_")
    return (int(head), int(tail), task_id) if head.isdigit() and tail.isdigit() else (1 << 30, 0, task_id)
