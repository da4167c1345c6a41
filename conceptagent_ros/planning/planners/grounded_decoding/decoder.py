"""Grounded beam search over any language model that gives next-token log-probabilities.

Score of a partial command w_1:n: sum_i log p_LM(w_i | w_<i, prompt) + sum_g log g(w_1:n).
Greedy search is a beam of one. Decoding stops at a complete call (`...)`) or the token limit.
The Hugging Face path does the same inside `generate()` (hf.py); this one serves models reached
through other interfaces: the top log-probabilities of an OpenAI-compatible completions endpoint,
or the simulated model's token distribution.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from conceptagent_ros.planning.planners.grounded_decoding.grounding import (
    GroundingFunction,
    combined,
    is_complete,
)


class TokenLM(Protocol):
    def next_tokens(self, prompt: str, prefix: str, top_k: int) -> list[tuple[str, float]]:
        """The top_k next tokens after prompt+prefix with their log-probabilities."""
        ...


@dataclass(frozen=True)
class Beam:
    text: str
    lm_logp: float
    grounding_logp: float

    @property
    def score(self) -> float:
        return self.lm_logp + self.grounding_logp


@dataclass(frozen=True)
class DecodeResult:
    text: str
    complete: bool
    lm_logp: float
    grounding_logp: float
    steps: int


def grounded_beam_search(lm: TokenLM, prompt: str, grounding: Sequence[GroundingFunction], beams: int = 1,
                         top_k: int = 10, max_tokens: int = 32) -> DecodeResult:
    live = [Beam("", 0.0, 0.0)]
    finished: list[Beam] = []
    steps = 0
    for _ in range(max_tokens):
        steps += 1
        extended: list[Beam] = []
        for beam in live:
            for token, logp in lm.next_tokens(prompt, beam.text, top_k):
                text = beam.text + token
                if not text.strip():
                    continue
                g = combined(grounding, text) if grounding else 1.0
                if g <= 0.0:
                    continue
                extended.append(Beam(text, beam.lm_logp + logp, math.log(g)))
        if not extended:
            break
        extended.sort(key=lambda b: b.score, reverse=True)
        live = []
        for beam in extended:
            (finished if is_complete(beam.text) else live).append(beam)
            if len(live) >= beams:
                break
        if finished and (not live or max(b.score for b in finished) >= live[0].score):
            break
    pool = finished or live
    if not pool:
        return DecodeResult("", False, -math.inf, -math.inf, steps)
    best = max(pool, key=lambda b: b.score)
    return DecodeResult(best.text.strip(), is_complete(best.text), best.lm_logp, best.grounding_logp, steps)
