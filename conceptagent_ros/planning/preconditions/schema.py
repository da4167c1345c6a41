"""The shape of a generated-preconditions file (`conceptagent preconditions generate` writes it),
checked by pydantic, and each formula parsed on its own, so that every error names the file, the
skill and what is wrong, on one line."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from conceptagent_ros.errors import ConceptAgentError, PDDLError
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.scene.loader import read_yaml
from conceptagent_ros.scene.symbolic import PredicateSpec
from conceptagent_ros.skills.contract import SkillLibrary


class PreconditionsFileError(ConceptAgentError):
    """A preconditions file that cannot be used."""


class PreconditionsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str | None = None
    preconditions: dict[str, Annotated[StrictStr, Field(min_length=1, max_length=20000)]]
    attempts: dict[str, int] = Field(default_factory=dict)


def load_preconditions(path: Path, skills: SkillLibrary, predicates: Sequence[PredicateSpec],
                       types: Iterable[str]) -> dict[str, str]:
    if not path.is_file():
        raise PreconditionsFileError(f"{path} does not exist; run `conceptagent preconditions generate` first")
    data = read_yaml(path, PreconditionsFileError)
    try:
        parsed = PreconditionsFile.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise PreconditionsFileError(f"{path}: {where}: {first['msg']}; expected `preconditions: {{skill: formula}}`") from None
    unknown = [s for s in parsed.preconditions if s not in skills]
    if unknown:
        raise PreconditionsFileError(f"{path}: preconditions.{unknown[0]}: no such skill; skills are "
                                     f"{', '.join(skills.names())}")
    type_list = list(types)
    for skill, formula in parsed.preconditions.items():
        spec = skills.get(skill)
        assert spec is not None
        try:
            PDDLDomain(predicates, [spec], type_list, {skill: formula})
        except PDDLError as e:
            raise PreconditionsFileError(f"{path}: preconditions.{skill}: {e}") from None
    return dict(parsed.preconditions)
