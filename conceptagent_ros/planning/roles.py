"""The questions a planner asks its language model, one method per role.

Every backend answers all of them: the chat backend (any OpenAI-compatible server) by prompting,
the simulated backend from the world's oracle with seeded errors, the offline backend from the
oracle without errors. Planners depend on this Protocol only, so each planner runs on each backend.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from conceptagent_ros.planning.prompts import PlanExample
from conceptagent_ros.planning.proposal import Critique, DecisionContext, TokenUsage
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall


@dataclass(frozen=True)
class Candidates:
    """Next actions proposed for one node of a search, best first."""

    calls: tuple[SkillCall, ...]
    raw: str = ""
    thought: str = ""
    error: str | None = None  # why (part of) the reply could not be used


@dataclass(frozen=True)
class PlanSamples:
    """Whole plans sampled for a task (LLM-Planner: one; Tree-Planner: N)."""

    plans: tuple[tuple[SkillCall, ...], ...]
    raw: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()  # one line for each sample that could not be read


@dataclass(frozen=True)
class Choice:
    index: int | None  # into the options; None: no usable answer
    raw: str = ""
    error: str | None = None


@dataclass(frozen=True)
class SamplingOptions:
    n: int = 1
    temperature: float = 0.0
    # token-level logit biases toward names (LLM-Planner biases observed objects); applied only
    # where the backend can map names to its tokenizer's ids
    bias_words: tuple[str, ...] = ()
    examples: tuple[PlanExample, ...] = field(default_factory=tuple)
    feedback: str = ""


class PlannerLLM(Protocol):
    """A language model as the planners use it; `usage` accumulates calls, tokens and seconds."""

    name: str
    usage: TokenUsage

    def propose_actions(self, context: DecisionContext, k: int,
                        planned: Sequence[SkillCall] = ()) -> Candidates: ...

    def critique(self, context: DecisionContext, plan: Sequence[SkillCall],
                 predicted: SymbolicState | None = None) -> Critique:
        """The plan's score; `predicted`: the state after it as the skills' effects predict it, where
        the search knows it (with grounding on)."""
        ...

    def sample_plans(self, context: DecisionContext, options: SamplingOptions) -> PlanSamples: ...

    def choose(self, context: DecisionContext, options: Sequence[SkillCall]) -> Choice: ...
