"""`--llm SPEC`: which backend answers the planner's questions.

  offline            no model: symbolic planning (the default)
  openai:MODEL       any OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY)
"""
from __future__ import annotations

from dataclasses import dataclass

from conceptagent_ros.errors import ConceptAgentError

KNOWN_KINDS = ("offline", "openai")


@dataclass(frozen=True)
class LLMSpec:
    kind: str
    model: str = ""

    def __str__(self) -> str:
        return self.kind if not self.model else f"{self.kind}:{self.model}"


def parse_llm_spec(text: str) -> LLMSpec:
    text = (text or "").strip()
    kind, _, model = text.partition(":")
    kind = kind.lower()
    if kind not in KNOWN_KINDS:
        raise ConceptAgentError(f"unknown --llm '{text}'; use one of: offline, openai:MODEL")
    if kind == "openai" and not model:
        raise ConceptAgentError("--llm openai needs a model name, e.g. --llm openai:gpt-4o-mini")
    if kind == "offline" and model:
        raise ConceptAgentError("--llm offline takes no model name")
    return LLMSpec(kind, model)
