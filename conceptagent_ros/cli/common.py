"""What every command shares: exit codes, argument checks, one-line errors."""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import NoReturn

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.terminal import printable

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def failure_rates(items: list[str] | None) -> dict[str, float]:
    """`--failure-rate SKILL=P` (repeatable), checked against the skill library."""
    from conceptagent_ros.skills.contract import load_skill_library
    from conceptagent_ros.skills.failure_rates import parse_failure_rates

    return parse_failure_rates(items or [], load_skill_library().names(), "--failure-rate")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {printable(text)!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def writable_file(path: str, flag: str) -> str:
    """Refuse a path that cannot become a file before any work is done."""
    target = Path(path)
    if target.is_dir():
        raise ConceptAgentError(f"{flag} {printable(path)} is a directory; give a file name")
    parent = target.parent if str(target.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise ConceptAgentError(f"{flag} {printable(path)}: {parent} is not a directory")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8"):
            pass
    except OSError as e:
        raise ConceptAgentError(f"{flag} {printable(path)}: cannot write there ({e.strerror or e})") from None
    return path


def command_line() -> str:
    """How this run was started, for the reports it writes."""
    return "conceptagent " + " ".join(shlex.quote(a) for a in sys.argv[1:])


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments get one line naming the flag (and exit 2), not a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {printable(message, 500)} (see {self.prog} --help)\n")
