"""The Grounded Decoding planner: each decision decodes one skill call under grounding functions.

Language model by backend: `hf:PATH` decodes inside transformers' `generate()` (hf.py); `openai:M`
uses the top log-probabilities of the server's completions endpoint; `simulated` and `offline` use
the backend's proposals as a token distribution (language_models.py). The grounding functions are
the same for all (grounding.py).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from conceptagent_ros.errors import LLMError
from conceptagent_ros.planning import prompts
from conceptagent_ros.planning.planners.base import PlannerCounters, UsageMark
from conceptagent_ros.planning.planners.grounded_decoding.decoder import (
    DecodeResult,
    TokenLM,
    grounded_beam_search,
)
from conceptagent_ros.planning.planners.grounded_decoding.grounding import (
    AffordanceGrounding,
    CallSpace,
    GroundingFunction,
    PreferenceGrounding,
    SafetyGrounding,
)
from conceptagent_ros.planning.proposal import DecisionContext, Proposal, TokenUsage
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.skills.contract import SkillCall


@dataclass(frozen=True)
class GroundedDecodingConfig:
    beams: int = 1  # 1: greedy search
    top_k: int = 10
    affordance: bool = True
    forbidden: tuple[str, ...] = ()  # skills, object ids or categories never to decode (safety)
    preferred: tuple[str, ...] = ()  # object ids or skills to prefer; default: the instruction's objects
    prefer_instruction_objects: bool = False
    max_tokens: int = 32


class ActionDecoder(Protocol):
    """Decodes one skill call for a prompt under grounding functions."""

    def decode(self, prompt: str, grounding: Sequence[GroundingFunction], beams: int, top_k: int,
               max_tokens: int) -> DecodeResult: ...


class TokenLMDecoder:
    """Grounded beam search over a TokenLM (the non-HF backends)."""

    def __init__(self, lm: TokenLM):
        self.lm = lm

    def decode(self, prompt: str, grounding: Sequence[GroundingFunction], beams: int, top_k: int,
               max_tokens: int) -> DecodeResult:
        return grounded_beam_search(self.lm, prompt, grounding, beams, top_k, max_tokens)


class GroundedDecodingPlanner:
    """`decoder_for` gives the decoder for one decision: the same one throughout for a model that is
    loaded once, a fresh one where the token distribution depends on the decision (simulated)."""

    def __init__(self, decoder_for: Callable[[DecisionContext], ActionDecoder], usage: TokenUsage,
                 verifier: PreconditionVerifier, config: GroundedDecodingConfig = GroundedDecodingConfig(),
                 name: str = "grounded-decoding"):
        self.decoder_for = decoder_for
        self.usage = usage
        self.verifier = verifier
        self.config = config
        self.name = name
        self.counters = PlannerCounters()

    def grounding_functions(self, context: DecisionContext) -> list[GroundingFunction]:
        space = CallSpace(context.skills, context.state, self.verifier)
        functions: list[GroundingFunction] = []
        if self.config.affordance:
            functions.append(AffordanceGrounding(space))
        if self.config.forbidden:
            categories = {o.id: o.category for o in context.graph.objects.values()}
            functions.append(SafetyGrounding(space, set(self.config.forbidden), categories))
        preferred = set(self.config.preferred)
        if self.config.prefer_instruction_objects:
            preferred |= instruction_objects(context.instruction, context.graph.objects)
        if preferred:
            functions.append(PreferenceGrounding(space, preferred))
        return functions

    def propose(self, context: DecisionContext) -> Proposal:
        mark = UsageMark.now(self.usage)
        prompt = prompts.grounded_decoding_prompt(context)
        try:
            decoder = self.decoder_for(context)
            result = decoder.decode(prompt, self.grounding_functions(context), self.config.beams,
                                    self.config.top_k, self.config.max_tokens)
        except LLMError as e:
            return mark.proposal(None, error=f"the language model failed: {e}")
        self.counters.add("decoded_tokens", result.steps)
        if not result.complete:
            self.counters.add("incomplete_decodes")
            return mark.proposal(None, raw=result.text, error=f"decoding ended without a whole call: {result.text!r}")
        try:
            call = SkillCall.parse(result.text)
        except ValueError as e:
            return mark.proposal(None, raw=result.text, error=f"decoded text is not a call: {e}")
        return mark.proposal(call, raw=result.text,
                             thought=f"LM log-prob {result.lm_logp:.2f}, grounding log-score {result.grounding_logp:.2f}")


def instruction_objects(instruction: str, objects: Collection[str] | dict[str, object]) -> set[str]:
    """Observed objects whose category is named in the instruction (`apple` -> apple_1)."""
    words = set(re.findall(r"[a-z]+", instruction.lower()))
    return {o for o in objects if re.sub(r"_\d+$", "", o).replace("_", " ") in words or
            re.sub(r"_\d+$", "", o) in words}
