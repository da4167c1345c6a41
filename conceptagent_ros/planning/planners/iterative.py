"""The iterative planner (ReAct-style): one LLM call per decision for the next action.

It is the paper's base agent (with grounding off) and, with grounding on, ConceptAgent without
tree search; Tree-Planner calls it ITERATIVE-PLANNER with local replanning, since a refused or
failed action is fed back and re-decided at the same step.
"""
from __future__ import annotations

from conceptagent_ros.planning.planners.base import PlannerCounters, UsageMark
from conceptagent_ros.planning.proposal import DecisionContext, Proposal
from conceptagent_ros.planning.roles import PlannerLLM


class IterativePlanner:
    def __init__(self, llm: PlannerLLM, name: str = "react"):
        self.llm = llm
        self.name = name
        self.usage = llm.usage
        self.counters = PlannerCounters()

    def propose(self, context: DecisionContext) -> Proposal:
        mark = UsageMark.now(self.usage)
        answer = self.llm.propose_actions(context, 1)
        call = answer.calls[0] if answer.calls else None
        return mark.proposal(call, answer.raw, answer.thought, None if call else (answer.error or "no action"))
