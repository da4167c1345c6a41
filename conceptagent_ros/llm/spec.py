"""`--llm SPEC`: which backend answers the planner's questions.

  offline                 no model: the oracle (symbolic planning over the belief), no errors (default)
  simulated[:RATES]       the oracle with seeded errors, for measuring planners (planning/oracles/simulated.py);
                          RATES is one number (default 0.2) or kind=rate pairs, e.g.
                          simulated:hallucination=0.1,infeasible=0.1,order=0,critic=0.2,decide=0.1
  openai:MODEL            any OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY)
  hf:PATH                 a local transformers causal LM (grounded decoding only)
"""
from __future__ import annotations

from dataclasses import dataclass, fields

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
        model = model or DEFAULT_SIMULATED_RATE
        ErrorRates.parse(model)  # a bad rate is bad input now, not an error mid-benchmark
    return LLMSpec(kind, model)


@dataclass(frozen=True)
class ErrorRates:
    hallucination: float = 0.0
    infeasible: float = 0.0
    order: float = 0.0
    critic: float = 0.0  # standard deviation of the critic's score noise
    decide: float = 0.0

    @classmethod
    def uniform(cls, rate: float) -> ErrorRates:
        """One knob: `rate` of proposed actions are wrong (a third of each kind); critic noise and
        deciding errors at the same rate."""
        return cls(rate / 3, rate / 3, rate / 3, rate, rate)

    @classmethod
    def parse(cls, text: str) -> ErrorRates:
        """`0.2`, or `hallucination=0.1,infeasible=0.05,order=0,critic=0.2,decide=0.1`."""
        text = text.strip()
        if not text:
            return cls()
        names = {f.name for f in fields(cls)}
        try:
            if "=" not in text:
                rates = cls.uniform(float(text))
            else:
                values: dict[str, float] = {}
                for item in text.split(","):
                    key, _, value = item.partition("=")
                    if key.strip() not in names:
                        raise ConceptAgentError(f"unknown error kind '{key.strip()}'; kinds: {', '.join(sorted(names))}")
                    values[key.strip()] = float(value)
                rates = cls(**values)
        except ValueError:
            raise ConceptAgentError(f"simulated error rates must be numbers: {text!r}") from None
        for f in fields(rates):
            if not 0.0 <= getattr(rates, f.name) <= 1.0:
                raise ConceptAgentError(f"simulated error rate {f.name}={getattr(rates, f.name)} is not in [0, 1]")
        if rates.hallucination + rates.infeasible + rates.order > 1.0:
            raise ConceptAgentError("simulated action error rates add up to more than 1")
        return rates

    def __str__(self) -> str:
        return ",".join(f"{f.name}={getattr(self, f.name):g}" for f in fields(self))
