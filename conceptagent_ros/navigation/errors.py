"""Named navigation failures, as skill results carry them: NO_PATH (nothing joins the base to the
goal, or no free spot near it), BLOCKED (the base touched something on the way), TIMEOUT (it did
not arrive in time), OUT_OF_REACH (it arrived as near to a thing as the map lets the base stand,
and the arm still does not reach it)."""
from __future__ import annotations

from conceptagent_ros.errors import ConceptAgentError

CODES = ("NO_PATH", "BLOCKED", "TIMEOUT", "OUT_OF_REACH")


class NavigationError(ConceptAgentError):
    def __init__(self, code: str, detail: str):
        if code not in CODES:
            raise ValueError(f"unknown navigation failure {code!r}; one of {', '.join(CODES)}")
        super().__init__(f"{code}: {detail}")
        self.code, self.detail = code, detail
