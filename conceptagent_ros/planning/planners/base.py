"""What every planner shares: the tokens and seconds of the LLM calls made for one decision."""
from __future__ import annotations

from dataclasses import dataclass, field

from conceptagent_ros.planning.proposal import Proposal, TokenUsage
from conceptagent_ros.skills.contract import SkillCall


@dataclass
class UsageMark:
    """A snapshot of a usage counter; `proposal` charges a decision with what was spent since."""

    usage: TokenUsage
    prompt: int = 0
    completion: int = 0
    seconds: float = 0.0

    @classmethod
    def now(cls, usage: TokenUsage) -> UsageMark:
        return cls(usage, usage.prompt_tokens, usage.completion_tokens, usage.seconds)

    def proposal(self, call: SkillCall | None, raw: str = "", thought: str = "", error: str | None = None) -> Proposal:
        return Proposal(call, raw=raw, thought=thought, error=error,
                        prompt_tokens=self.usage.prompt_tokens - self.prompt,
                        completion_tokens=self.usage.completion_tokens - self.completion,
                        llm_seconds=self.usage.seconds - self.seconds)


@dataclass
class PlannerCounters:
    """Planner-specific figures that the benchmark reports beside the agent's own."""

    values: dict[str, float] = field(default_factory=dict)

    def add(self, key: str, amount: float = 1.0) -> None:
        self.values[key] = self.values.get(key, 0.0) + amount
