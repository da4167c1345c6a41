"""Where the shipped configuration and data live: next to the Python package for pip installs, in the
ROS share directory for colcon installs, or wherever CONCEPTAGENT_CONFIG / CONCEPTAGENT_DATA point.

config/ holds what users edit (skills, prompts, scenes, params); data/ holds benchmark data that
ships with the package and is read, never edited (the Embodied Agent Interface tasks)."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from conceptagent_ros.errors import ConfigError


def _shipped_dir(name: str, marker: str, env: str) -> Path:
    """The shipped folder `name` (one that holds `marker`): $env, the package's own, or share/."""
    override = os.environ.get(env)
    if override:
        path = Path(override)
        if not path.is_dir():
            raise ConfigError(f"{env}={override} is not a directory")
        return path
    here = Path(__file__).resolve().parent
    for candidate in (here / name, here.parent / name):
        if (candidate / marker).exists():
            return candidate
    try:  # colcon install: config/ and data/ are installed to share/conceptagent_ros/
        from ament_index_python.packages import get_package_share_directory

        shared = Path(get_package_share_directory("conceptagent_ros")) / name
        if (shared / marker).exists():
            return shared
    except Exception:  # noqa: BLE001 - ament_index is absent outside ROS; fall through to the error
        pass
    raise ConfigError(f"cannot find the {name}/ directory; set {env} to its path")


@lru_cache(maxsize=1)
def config_dir() -> Path:
    return _shipped_dir("config", "skills.yaml", "CONCEPTAGENT_CONFIG")


@lru_cache(maxsize=1)
def data_dir() -> Path:
    return _shipped_dir("data", "eai_virtualhome", "CONCEPTAGENT_DATA")


@lru_cache(maxsize=1)
def description_dir() -> Path:
    """The robot description (xacro), beside config/: description/ in the repository."""
    return _shipped_dir("description", "conceptagent_mm.urdf.xacro", "CONCEPTAGENT_DESCRIPTION")


def user_cache_dir() -> Path:
    """Where on-disk caches (LLM replies, generated preconditions) go unless told otherwise."""
    base = os.environ.get("CONCEPTAGENT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "conceptagent"
    )
    return Path(base)
