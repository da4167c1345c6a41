"""LLM-Planner (Song et al., ICCV 2023): few-shot high-level planning with grounded re-planning.

At the start, and whenever re-planning triggers, the LLM writes the rest of the plan from: the
task description, k in-context examples retrieved by kNN on the instruction, the steps completed so
far and the list of objects observed so far (the paper's Figure 2), with logit biases toward the
observed objects' names where the backend can apply them. Re-planning triggers when an action is
refused or fails (with the reason as feedback), when the plan runs out before `done`, and after a
fixed number of executed steps (the paper's second condition).
"""
from __future__ import annotations

from dataclasses import dataclass

from conceptagent_ros.planning.plan_view import PlanNode, chain
from conceptagent_ros.planning.planners.base import PlannerCounters, UsageMark
from conceptagent_ros.planning.planners.retrieval import ExampleRetriever
from conceptagent_ros.planning.proposal import DecisionContext, Proposal
from conceptagent_ros.planning.roles import PlannerLLM, SamplingOptions
from conceptagent_ros.skills.contract import SkillCall


@dataclass(frozen=True)
class LLMPlannerConfig:
    examples: int = 9  # in-context examples (the paper uses 9)
    replan_every: int = 8  # executed steps after which the plan is regenerated
    logit_bias: bool = True
    max_replans: int = 20  # plus one per room not visited and receptacle not searched


class LLMPlanner:
    def __init__(self, llm: PlannerLLM, retriever: ExampleRetriever | None,
                 config: LLMPlannerConfig = LLMPlannerConfig(), task_id: str = "", name: str = "llm-planner"):
        self.llm = llm
        self.retriever = retriever
        self.config = config
        self.task_id = task_id
        self.name = name
        self.usage = llm.usage
        self.counters = PlannerCounters()
        self._plan: list[SkillCall] = []
        self._since_plan = 0
        self._feedback = ""

    def plan_view(self) -> PlanNode | None:
        """The rest of the current plan, as a chain."""
        return chain([str(call) for call in self._plan]) if self._plan else None

    def propose(self, context: DecisionContext) -> Proposal:
        mark = UsageMark.now(self.usage)
        last = context.history[-1] if context.history else None
        if last is not None and self._plan and last.call == self._plan[0]:
            if last.success and last.executed:
                self._plan.pop(0)
                self._since_plan += 1
            else:
                self.counters.add("corrections")
                self._feedback = f"{last.call} did not work: {last.feedback[:400]}"
                self._plan = []
        if self._since_plan >= self.config.replan_every:
            self._plan = []
        error = None
        if not self._plan:
            limit = self.config.max_replans + context.graph.frontier_size()  # grows with what is unexplored
            if self.counters.values.get("plans", 0) >= limit:
                return mark.proposal(SkillCall("done"), raw=f"giving up: re-planning limit of {limit} reached")
            error = self._make_plan(context)
        if not self._plan:
            return mark.proposal(None, error=error or "the plan was empty")
        return mark.proposal(self._plan[0], raw="plan: " + " -> ".join(map(str, self._plan)))

    def _make_plan(self, context: DecisionContext) -> str | None:
        self.counters.add("plans")
        examples = (tuple(self.retriever.nearest(context.instruction, self.config.examples, self.task_id))
                    if self.retriever else ())
        bias = tuple(sorted(context.graph.objects)) if self.config.logit_bias else ()
        samples = self.llm.sample_plans(context, SamplingOptions(n=1, examples=examples, bias_words=bias,
                                                                 feedback=self._feedback))
        self._feedback = ""
        self._since_plan = 0
        if not samples.plans:
            return "; ".join(samples.errors) or "no plan in the reply"
        self._plan = list(samples.plans[0])
        return None
