"""Next-token sources for the grounded beam search (decoder.py).

- `CandidateMixtureLM`: the simulated (or offline) model as a token distribution. The backend's
  proposed actions, best first, take most of the probability mass; the rest is spread over every
  token of the vocabulary (skill names, object ids, punctuation), so an ungrounded decode can and
  does wander into calls that do not exist. Tokens are word pieces: `pick(apple_1)` is
  `pick ( apple _ 1 )`.
- `CompletionsLogprobLM`: an OpenAI-compatible `/v1/completions` endpoint asked for one token at
  a time with its top log-probabilities (vLLM, llama.cpp and OpenAI's legacy models answer it).
"""
from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Sequence

from conceptagent_ros.errors import LLMError
from conceptagent_ros.planning.proposal import TokenUsage
from conceptagent_ros.skills.contract import SkillCall

_PIECE = re.compile(r"[A-Za-z]+|\d+|[^A-Za-z\d\s]")


def pieces(text: str) -> list[str]:
    return _PIECE.findall(text)


class CandidateMixtureLM:
    def __init__(self, candidates: Sequence[SkillCall], vocabulary: Iterable[str], noise: float = 0.1,
                 decay: float = 0.35):
        weights = [decay ** i for i in range(len(candidates))]
        total = sum(weights) or 1.0
        self.candidates = [(str(c).replace(" ", ""), (1.0 - noise) * w / total) for c, w in zip(candidates, weights)]
        self.vocabulary = sorted({p for word in vocabulary for p in pieces(word)} | {"(", ")", ","})
        self.noise = noise if candidates else 1.0

    def next_tokens(self, prompt: str, prefix: str, top_k: int) -> list[tuple[str, float]]:
        mass: dict[str, float] = {}
        prefix = prefix.replace(" ", "")
        for text, weight in self.candidates:
            if text.startswith(prefix) and len(text) > len(prefix):
                token = pieces(text[len(prefix):])[0]
                mass[token] = mass.get(token, 0.0) + weight
        share = self.noise / len(self.vocabulary)
        for token in self.vocabulary:
            mass[token] = mass.get(token, 0.0) + share
        total = sum(mass.values())
        ranked = sorted(mass.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(t, math.log(m / total)) for t, m in ranked[:top_k]]


class CompletionsLogprobLM:
    """One `/v1/completions` request per token, `max_tokens=1`, `logprobs=top_k`."""

    def __init__(self, model: str, usage: TokenUsage, client: object | None = None, top_k_cap: int = 20):
        if client is None:
            import os

            import openai

            client = openai.OpenAI(base_url=os.environ.get("OPENAI_BASE_URL") or None,
                                   api_key=os.environ.get("OPENAI_API_KEY") or "not-needed", max_retries=2,
                                   timeout=float(os.environ.get("CONCEPTAGENT_LLM_TIMEOUT", "60")))
        self.client = client
        self.model = model
        self.usage = usage
        self.top_k_cap = top_k_cap

    def next_tokens(self, prompt: str, prefix: str, top_k: int) -> list[tuple[str, float]]:
        import openai

        started = time.perf_counter()
        try:
            response = self.client.completions.create(  # type: ignore[attr-defined]
                model=self.model, prompt=prompt + prefix, max_tokens=1, temperature=0.0,
                logprobs=min(top_k, self.top_k_cap))
            logprobs = response.choices[0].logprobs
            top = (logprobs.top_logprobs or [{}])[0] if logprobs is not None else {}
        except (openai.OpenAIError, IndexError, AttributeError, TypeError) as e:
            raise LLMError(f"the completions endpoint gave no log-probabilities: {e}") from e
        usage = getattr(response, "usage", None)
        self.usage.add(int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 1) or 1),
                       time.perf_counter() - started)
        return sorted(((str(t), float(v)) for t, v in dict(top).items()), key=lambda kv: -kv[1])[:top_k]
