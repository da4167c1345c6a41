"""Where fetched models live, and how a missing one is reported.

One directory for every fetched model: $CONCEPTAGENT_MODELS, else the user's cache
(~/.cache/conceptagent/models, or $XDG_CACHE_HOME/conceptagent/models). A model counts as there only
when its file has the pinned size: a fetch writes `<file>.partial` and renames it only after the
sha256 matched, so a half-finished fetch never passes for a finished one."""
from __future__ import annotations

import os
from pathlib import Path

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.models.catalogue import CATALOGUE, RegistryModel


class ModelNotFetched(ConfigError):
    """A model of the catalogue is not in the models directory."""


def models_dir() -> Path:
    override = os.environ.get("CONCEPTAGENT_MODELS")
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "conceptagent" / "models"


def lookup(name: str) -> RegistryModel:
    """A model by its name, or by a part of it that names one model only (`0.5b`)."""
    if name in CATALOGUE:
        return CATALOGUE[name]
    matches = [m for key, m in CATALOGUE.items() if name and name.lower() in key]
    if len(matches) == 1:
        return matches[0]
    raise ConfigError(f"{'ambiguous' if matches else 'no'} model {name!r}; the models the project fetches: "
                      f"{', '.join(CATALOGUE)}")


def model_file(model: RegistryModel) -> Path:
    return models_dir() / model.file


def is_fetched(model: RegistryModel) -> bool:
    path = model_file(model)
    if model.layout == "folder":  # renamed from its .partial only once verified
        return path.is_dir() and sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) == model.size
    return path.is_file() and path.stat().st_size == model.size


def fetched_path(name: str) -> Path:
    """The model's file, or a one-line error naming the command that fetches it."""
    model = lookup(name)
    if not is_fetched(model):
        raise ModelNotFetched(f"model {name} is not in {models_dir()}: fetch it with "
                              f"`conceptagent models fetch --model {name}` (or `make models`)")
    return model_file(model)
