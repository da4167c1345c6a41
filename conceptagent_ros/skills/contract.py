"""Skill contracts: name, typed arguments, description, PDDL preconditions and effects.

The contract is what the planner reasons about and what every backend (the embedded world, ROS
action servers) implements. Arguments are object ids of the scene graph.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.paths import config_dir


@dataclass(frozen=True)
class SkillParam:
    name: str
    description: str


@dataclass(frozen=True)
class SkillSpec:
    name: str
    description: str
    params: tuple[SkillParam, ...]
    precondition: str  # PDDL formula over ?param variables (ground truth, hand-written)
    effect: str  # PDDL effect, what a planner predicts

    @property
    def arity(self) -> int:
        return len(self.params)

    def signature(self) -> str:
        return f"{self.name}(" + ", ".join(p.name for p in self.params) + ")"


@dataclass(frozen=True)
class SkillCall:
    """A skill applied to object ids, e.g. place(apple_1, fridge_1)."""

    skill: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.skill}(" + ", ".join(self.args) + ")"

    @classmethod
    def parse(cls, text: str) -> SkillCall:
        """Parse `name(a, b)` or `name a b` text; raises ValueError with the reason."""
        text = text.strip().strip("`").strip()
        match = re.fullmatch(r"([A-Za-z_][\w-]*)\s*\((.*)\)", text, flags=re.S)
        if match:
            name, inner = match.group(1), match.group(2)
            args = [a.strip().strip("'\"") for a in inner.split(",") if a.strip()]
        else:
            parts = text.split()
            if not parts or not re.fullmatch(r"[A-Za-z_][\w-]*", parts[0]):
                raise ValueError(f"expected an action like pick(apple_1), got {text[:80]!r}")
            name, args = parts[0], parts[1:]
        return cls(name.lower(), tuple(args))


class SkillLibrary:
    """The set of skills the robot has, in a fixed order."""

    def __init__(self, skills: Sequence[SkillSpec]):
        self._skills = {s.name: s for s in skills}
        if len(self._skills) != len(skills):
            raise ConfigError("duplicate skill names in the skill library")

    def __iter__(self):
        return iter(self._skills.values())

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    def get(self, name: str) -> SkillSpec | None:
        return self._skills.get(name)

    def names(self) -> list[str]:
        return list(self._skills)

    def preconditions(self) -> Mapping[str, str]:
        return {s.name: s.precondition for s in self._skills.values()}

    def actionable(self) -> list[SkillSpec]:
        """Skills that change the world (everything but `done`)."""
        return [s for s in self._skills.values() if s.name != "done"]


def load_skill_library(path: Path | None = None) -> SkillLibrary:
    return _load_skill_library(str(path or config_dir() / "skills.yaml"))


@lru_cache(maxsize=4)
def _load_skill_library(path: str) -> SkillLibrary:
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))["skills"]
        skills = [
            SkillSpec(
                name=s["name"], description=" ".join(str(s["description"]).split()),
                params=tuple(SkillParam(p["name"], p.get("description", "")) for p in s.get("params") or []),
                precondition=" ".join(str(s.get("precondition", "(and)")).split()),
                effect=" ".join(str(s.get("effect", "(and)")).split()),
            )
            for s in raw
        ]
    except (OSError, KeyError, TypeError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: malformed skill library: {e}") from e
    return SkillLibrary(skills)


@dataclass(frozen=True)
class SkillOutcome:
    call: SkillCall
    success: bool
    message: str
    failure: str | None = None  # None | "precondition" | "physical" | "invalid" | "canceled" | "timeout" | "unavailable"
    # a physical failure's named error (nav2_msgs' error codes are the model): COLLISION, SLIPPED,
    # BLOCKED, NO_PATH, ...; None where the skill's backend names none
    code: str | None = None

    @property
    def kind(self) -> str:
        """What went wrong, as a report counts it: the named code where there is one, else the failure."""
        return self.code or self.failure or ("ok" if self.success else "failed")

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"success": self.success, "message": self.message, "failure": self.failure}
        if self.code:
            data["code"] = self.code
        return data
