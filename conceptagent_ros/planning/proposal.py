"""The seam between the agent loop and whatever proposes actions: an LLM, or the offline planner."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from conceptagent_ros.planning.belief import Belief
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary


@dataclass(frozen=True)
class StepRecord:
    """One decision of the agent as the proposer sees it in its history."""

    step: int
    call: SkillCall | None  # None: the reply could not be turned into a call
    executed: bool
    success: bool
    feedback: str  # outcome or unsatisfied preconditions or parse error, in words
    failure: str | None = None  # precondition | physical | invalid | malformed | blocked | premature_done | repeated | ...
    newly_observed: tuple[str, ...] = ()  # what the step brought into view (said after the feedback)

    def said(self, newly_observed: bool = True) -> str:
        """The feedback in words, with what was newly observed (`newly_observed`) or without it."""
        if newly_observed and self.newly_observed:
            return f"{self.feedback}; newly observed: {', '.join(self.newly_observed)}"
        return self.feedback


@dataclass(frozen=True)
class DecisionContext:
    instruction: str
    goal: Goal | None
    state: SymbolicState
    state_text: str
    graph: Belief
    skills: SkillLibrary
    history: tuple[StepRecord, ...] = ()
    step: int = 0
    # With grounding on, what the agent offers (planning/choices.py), worked out the first time a
    # proposer reads `choices` (most proposers never do, and it costs a pass over every call)
    offer: Callable[[], tuple[SkillCall, ...] | None] | None = field(default=None, compare=False, repr=False)

    @cached_property
    def choices(self) -> tuple[SkillCall, ...] | None:
        """The calls the agent would run now; None with grounding off. A chat proposer with
        structured replies decodes its action from these alone (Grounded Decoding's grounding in
        the decoder)."""
        return self.offer() if self.offer is not None else None


@dataclass
class TokenUsage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def add(self, prompt: int, completion: int, seconds: float) -> None:
        self.calls += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.seconds += seconds

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Proposal:
    call: SkillCall | None
    raw: str = ""  # the model's reply (or the planner's note)
    thought: str = ""
    error: str | None = None  # why `raw` could not be used; fed back to the model
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0


@dataclass(frozen=True)
class Critique:
    score: float  # 0 (useless) .. 1 (reaches the goal efficiently)
    justification: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ActionProposer(Protocol):
    name: str
    usage: TokenUsage

    def propose(self, context: DecisionContext) -> Proposal: ...


class PlanCritic(Protocol):
    def critique(self, context: DecisionContext, plan: list[SkillCall],
                 predicted: SymbolicState | None = None) -> Critique: ...


@dataclass
class ProposerStats:
    planner_calls: int = 0
    planner_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
