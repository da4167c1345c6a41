"""Benchmark results that survive a kill: an append-only journal of finished episodes, and atomic
writes for everything derived from it.

`episodes.jsonl` in the output folder starts with a header line holding the run's configuration;
each finished episode is one more line, flushed and fsync'd before the next episode starts. A rerun
with the same configuration and output folder skips the episodes already in the journal; a
different configuration is refused with the difference named, unless the caller starts over. A
line cut short by the kill is ignored (its episode runs again).
"""
from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from conceptagent_ros.atomic_files import write_atomic
from conceptagent_ros.errors import ConceptAgentError

JOURNAL = "episodes.jsonl"
FORMAT = 1


class JournalError(ConceptAgentError):
    """The output folder holds results of another configuration, or cannot be written."""


def episode_key(row: Mapping[str, Any], fields: Iterable[str]) -> tuple[str, ...]:
    return tuple(str(row.get(f, "")) for f in fields)


class EpisodeJournal:
    """Finished episodes of one run, on disk as they finish."""

    def __init__(self, out: Path, config: Mapping[str, Any], resume: bool = True):
        self.out = out
        self.path = out / JOURNAL
        self.config = json.loads(json.dumps(config, sort_keys=True, default=str))
        self.done: dict[tuple[str, ...], dict[str, Any]] = {}
        if out.exists() and not out.is_dir():
            raise JournalError(f"--out {out} is a file; give a folder for the results")
        if resume and self.path.is_file():
            self._load()
        else:
            self._start()

    def _start(self) -> None:
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(self.out / "traces", ignore_errors=True)  # an earlier run's traces are not ours
            write_atomic(self.path, json.dumps({"journal": FORMAT, "config": self.config}, sort_keys=True) + "\n")
        except OSError as e:
            raise JournalError(f"cannot write results to {self.out}: {e.strerror or e}") from e

    def _load(self) -> None:
        lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        try:
            header = json.loads(lines[0]) if lines else {}
        except json.JSONDecodeError:
            header = {}
        if header.get("journal") != FORMAT:
            raise JournalError(f"{self.path} is not a results journal of this version; use another --out or "
                               "--no-resume to start over")
        if header.get("config") != self.config:
            old = header.get("config", {})
            changed = sorted(k for k in set(old) | set(self.config) if old.get(k) != self.config.get(k))
            raise JournalError(f"{self.out} holds results of another configuration (differs in: {', '.join(changed)}); "
                               "use another --out, or --no-resume to discard them and start over")
        for line in lines[1:]:
            try:
                entry = json.loads(line)
                self.done[tuple(entry["key"])] = entry["row"]
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # the line the kill cut short: that episode runs again
        # Rewrite without the cut line, so appends start on a clean line.
        entries = (json.dumps({"key": list(k), "row": r}, default=str) for k, r in self.done.items())
        write_atomic(self.path, "\n".join([lines[0], *entries]) + "\n")

    def get(self, key: tuple[str, ...]) -> dict[str, Any] | None:
        return self.done.get(key)

    def record(self, key: tuple[str, ...], row: dict[str, Any]) -> None:
        line = json.dumps({"key": list(key), "row": row}, default=str)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.done[key] = row
