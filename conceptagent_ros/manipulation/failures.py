"""Named manipulation failures: every planner and executor failure ends in one of these codes and a
message a person (or the task planner, as feedback) can act on."""
from __future__ import annotations

from conceptagent_ros.errors import ConceptAgentError

CODES = {
    "EMPTY_CLOUD": "no usable points of the object (none seen, or all NaN / infinite)",
    "NO_GRASP_FOUND": "no grasp fits the object: too wide for the hand, or every approach collides",
    "UNREACHABLE": "grasps exist but the arm cannot reach any of them",
    "NO_SUPPORT_SURFACE": "no surface on the receptacle to put the object on",
    "NO_PLACE_FOUND": "no free, stable spot on the receptacle for the object",
    "COLLISION": "the motion would hit something",
    "SLIPPED": "the object slipped out of the hand",
    "NOT_HELD": "the hand closed on nothing",
    "NOT_SEEN": "no camera sees the object (or the receptacle, or the drawer's front)",
    "NOT_MOVED": "the drawer or door is not where the motion should have left it (measured from its points)",
    "INVALID_CONFIG": "the robot description is unusable",
}


class ManipulationError(ConceptAgentError):
    """A manipulation failure with its code (one of CODES)."""

    def __init__(self, code: str, message: str):
        if code not in CODES:
            raise ValueError(f"unknown manipulation failure code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.detail = message
