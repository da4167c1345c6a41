"""`--llm SPEC`: which backend answers the planner's questions.

  offline                 no model: the oracle (symbolic planning over the belief), no errors (default)
  simulated[:RATES]       the oracle with seeded errors, for measuring planners (llm/simulated.py);
                          RATES is one number (default 0.2) or kind=rate pairs, e.g.
                          simulated:hallucination=0.1,infeasible=0.1,order=0,critic=0.2,decide=0.1
  openai:MODEL            any OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY)
  hf:PATH                 a local transformers causal LM (grounded decoding only)
"""
from __future__ import annotations

from dataclasses import dataclass

from conceptagent_ros.errors import ConceptAgentError

KNOWN_KINDS = ("offline", "simulated", "openai", "hf")
DEFAULT_SIMULATED_RATE = "0.2"


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
        raise ConceptAgentError(f"unknown --llm '{text}'; use one of: offline, simulated[:RATE], openai:MODEL, hf:PATH")
    if kind in ("openai", "hf") and not model:
        example = "gpt-4o-mini" if kind == "openai" else "/path/to/model"
        raise ConceptAgentError(f"--llm {kind} needs a model, e.g. --llm {kind}:{example}")
    if kind == "offline" and model:
        raise ConceptAgentError("--llm offline takes no model name")
    if kind == "simulated":
        from conceptagent_ros.llm.simulated import ErrorRates

        model = model or DEFAULT_SIMULATED_RATE
        ErrorRates.parse(model)  # a bad rate is bad input now, not an error mid-benchmark
    return LLMSpec(kind, model)
