"""Logit biases need the server's token ids for words; only a tokenizer knows them.

`CONCEPTAGENT_TOKENIZER` names a Hugging Face tokenizer (a local directory, or a hub id when the
hub is reachable) matching the served model. Without it, planners that would bias (LLM-Planner)
run unbiased and say so once.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import Protocol

from conceptagent_ros.errors import ConceptAgentError

log = logging.getLogger(__name__)
MAX_BIASED_TOKENS = 300  # the OpenAI API accepts at most 300 entries


class TokenIds(Protocol):
    def encode(self, text: str) -> list[int]: ...


class HFTokenIds:
    def __init__(self, name_or_path: str):
        try:
            from transformers import AutoTokenizer
        except ImportError as e:
            raise ConceptAgentError("logit biases need `pip install transformers` for the tokenizer") from e
        self.tokenizer = AutoTokenizer.from_pretrained(name_or_path)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))


def tokenizer_from_env() -> TokenIds | None:
    name = os.environ.get("CONCEPTAGENT_TOKENIZER")
    return HFTokenIds(name) if name else None


def bias_for_words(tokenizer: TokenIds, words: Iterable[str], strength: float = 2.0) -> dict[int, float]:
    """A positive bias on every token of each word (with and without a leading space)."""
    bias: dict[int, float] = {}
    for word in words:
        for variant in (word, " " + word):
            for token in tokenizer.encode(variant):
                bias[token] = strength
                if len(bias) >= MAX_BIASED_TOKENS:
                    return bias
    return bias
