"""What the commands print, written once: text from outside made safe for a terminal, and the one
line per agent step that `conceptagent run` and `conceptagent ros send` both show."""
from __future__ import annotations

from collections.abc import Sequence


def printable(text: str, limit: int = 200) -> str:
    """What may reach a terminal or a log: no escape sequences or other control characters from input."""
    return "".join(ch if ch.isprintable() else "?" for ch in str(text)[:limit])


def step_mark(executed: bool, success: bool, skill: str | None) -> str:
    """ok / ERR for a skill that ran, END for an accepted `done`, NO for a refused or unusable proposal."""
    if executed:
        return "ok " if success else "ERR"
    return "END" if skill == "done" and success else "NO "


def step_lines(step: int, executed: bool, success: bool, call: str | None, skill: str | None, feedback: str,
               observed: Sequence[str] = ()) -> list[str]:
    """`[step  3] ok  pick(apple_1)`, then why it failed, or what it newly showed."""
    lines = [f"[step {step:>2}] {step_mark(executed, success, skill)} {printable(call) if call else '(unusable reply)'}"]
    if not success:
        lines.append(f"          {printable(feedback, 2000)}")
    elif observed:
        lines.append(f"          newly observed: {', '.join(observed)}")
    return lines
