"""Where model weights come from: a local folder or the Hugging Face cache, never the network at
run time (`conceptagent models fetch` downloads them at setup)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from conceptagent_ros.errors import ConfigError


class MissingModelError(ConfigError):
    """A configured model is not on this machine."""


def expand(path: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(path)))


def load_pretrained(cls: Any, model: str, **kwargs: Any) -> Any:
    """cls.from_pretrained(model) from local files only, with an error that says what to run."""
    source = expand(model)
    local = source.exists()
    try:
        return cls.from_pretrained(str(source) if local else model, local_files_only=True, **kwargs)
    except OSError as e:
        where = f"folder {source}" if local else f"'{model}' in the Hugging Face cache"
        raise MissingModelError(
            f"model {model!r} could not be loaded from {where}: {str(e).splitlines()[0]}. Weights are never "
            "downloaded at run time: run `conceptagent models fetch` on a machine with internet (or point the "
            "perception config at a local folder)") from e
