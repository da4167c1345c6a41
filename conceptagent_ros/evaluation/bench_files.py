"""The three files every physical benchmark writes: results.json (the figures), results.md (the
same for people) and episodes.csv (one row per episode), each written whole or not at all."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from conceptagent_ros.atomic_files import write_atomic


def write_bench_files(out: Path, figures: dict[str, Any], markdown: str, episodes: Sequence[Any]) -> list[Path]:
    """`episodes` are dataclass instances (one per row)."""
    write_atomic(out / "results.json", json.dumps(figures, indent=2) + "\n")
    write_atomic(out / "results.md", markdown)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(asdict(episodes[0])) if episodes else ["episode"])
    writer.writeheader()
    writer.writerows(asdict(e) for e in episodes)
    write_atomic(out / "episodes.csv", text.getvalue())
    return [out / "results.json", out / "results.md", out / "episodes.csv"]
