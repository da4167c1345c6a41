"""Where the shipped configuration lives: next to the Python package for pip installs, in the ROS
share directory for colcon installs, or wherever CONCEPTAGENT_CONFIG points."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from conceptagent_ros.errors import ConfigError


@lru_cache(maxsize=1)
def config_dir() -> Path:
    override = os.environ.get("CONCEPTAGENT_CONFIG")
    if override:
        path = Path(override)
        if not path.is_dir():
            raise ConfigError(f"CONCEPTAGENT_CONFIG={override} is not a directory")
        return path
    here = Path(__file__).resolve().parent
    for candidate in (here / "config", here.parent / "config"):
        if (candidate / "skills.yaml").is_file():
            return candidate
    try:  # colcon install: config/ is installed to share/conceptagent_ros/config
        from ament_index_python.packages import get_package_share_directory

        shared = Path(get_package_share_directory("conceptagent_ros")) / "config"
        if (shared / "skills.yaml").is_file():
            return shared
    except Exception:  # noqa: BLE001 - ament_index is absent outside ROS; fall through to the error
        pass
    raise ConfigError("cannot find the config/ directory; set CONCEPTAGENT_CONFIG to its path")


def user_cache_dir() -> Path:
    """Where on-disk caches (LLM replies, generated preconditions) go unless told otherwise."""
    base = os.environ.get("CONCEPTAGENT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "conceptagent"
    )
    return Path(base)
