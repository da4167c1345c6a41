"""How the no-model translator reads instructions: right, refused and wrong per set.

Sets: the built-in suites' instructions (easy, moderate, hard; each task's goal is the reference) and
the project's phrasing development set (config/words/phrasings_dev.yaml: synonyms, ids, polite frames,
attributes, pronouns, over the built-in scenes and two scenes written for it). A reading is right when
its goal means the same as the reference on the instruction's scene (goal_equivalence.py), wrong when
it means something else, refused when the translator says what it did not understand. Wrong is the
figure that matters most: a refusal asks again, a wrong goal does the wrong thing.

Run twice, with and without the word models (MiniLM, spaCy; `CONCEPTAGENT_WORD_MODELS=off`), it says
what they add.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from conceptagent_ros.errors import ConceptAgentError, InstructionError
from conceptagent_ros.paths import config_dir

BUILT_IN_SUITES = ("easy", "moderate", "hard")
DEV_FILE = "words/phrasings_dev.yaml"


@dataclass(frozen=True)
class Phrasing:
    set: str
    id: str
    scene: str
    say: str
    goal: str  # the reference PDDL goal


@dataclass(frozen=True)
class Reading:
    phrasing: Phrasing
    outcome: str  # "right" | "refused" | "wrong"
    read: str  # the translated goal, or the refusal


def suite_phrasings(suites: Iterable[str] = BUILT_IN_SUITES) -> list[Phrasing]:
    from conceptagent_ros.evaluation.tasks import load_suite

    return [Phrasing(s, t.id, t.scene, t.instruction, t.goal) for s in suites for t in load_suite(s)]


def dev_phrasings(path: Path | None = None) -> list[Phrasing]:
    """The development set's items; a scene given as a YAML path is under config/."""
    file = path or config_dir() / DEV_FILE
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        items = []
        for s in data["sets"]:
            for i, item in enumerate(s["items"]):
                scene = str(item["scene"])
                if scene.endswith(".yaml") and not Path(scene).is_absolute():
                    scene = str(config_dir() / scene)
                items.append(Phrasing(str(s["id"]), f"{s['id']}_{i + 1:02d}", scene, str(item["say"]), str(item["goal"])))
        return items
    except (OSError, yaml.YAMLError, KeyError, TypeError) as e:
        raise ConceptAgentError(f"cannot read the phrasing set {file}: {e}") from e


def read_all(phrasings: Iterable[Phrasing], progress: Callable[[Reading], None] | None = None) -> list[Reading]:
    from conceptagent_ros.evaluation.goal_equivalence import SceneGoals

    goals: dict[str, SceneGoals] = {}
    readings = []
    for p in phrasings:
        scene = goals.setdefault(p.scene, SceneGoals(p.scene))
        try:
            got = scene.translate(p.say)
        except InstructionError as e:
            reading = Reading(p, "refused", str(e))
        else:
            same = scene.verdict(got, scene.parse(p.goal)).same
            reading = Reading(p, "right" if same else "wrong", got.text)
        readings.append(reading)
        if progress:
            progress(reading)
    return readings


def tally(readings: Iterable[Reading]) -> dict[str, dict[str, int]]:
    """Per set: right, refused, wrong and total."""
    table: dict[str, dict[str, int]] = {}
    for r in readings:
        row = table.setdefault(r.phrasing.set, {"right": 0, "refused": 0, "wrong": 0, "total": 0})
        row[r.outcome] += 1
        row["total"] += 1
    return table

