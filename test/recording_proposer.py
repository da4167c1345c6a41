"""A proposer for tests of what the agent tells its proposer: it makes the calls it is given, in
order (then done()), and keeps every context it was given."""
from __future__ import annotations

from conceptagent_ros.planning.proposal import DecisionContext, Proposal, TokenUsage
from conceptagent_ros.skills.contract import SkillCall


class Recording:
    """A proposer that says what it is told and keeps every context it was given."""

    name = "recording"

    def __init__(self, calls: list[SkillCall]):
        self.calls = list(calls)
        self.usage = TokenUsage()
        self.contexts: list[DecisionContext] = []

    def propose(self, context: DecisionContext) -> Proposal:
        self.contexts.append(context)
        return Proposal(self.calls.pop(0) if self.calls else SkillCall("done"))
