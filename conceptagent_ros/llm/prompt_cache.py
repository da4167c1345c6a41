"""A RAM cache of the local model's recent prompts, bounded by what its entries really hold.

llama-cpp-python's `LlamaRAMCache` keeps the model's state after each completion so that a later
prompt sharing its prefix resumes from it (planners that alternate two requests -- MCTS's expansion
and critic, Tree-Planner's sampling and deciding -- otherwise evict each other's prefix from the
one key-value cache the server keeps). It evicts by the llama.cpp state's size alone, but each entry
also carries a copy of the logits of every token evaluated (the server keeps them all:
`logits_all`, which log-probabilities need), 4 bytes x the vocabulary (151,936 for Qwen2.5) per
token: about 0.9 GB for a 1,500-token prompt. Counted that way, a 2 GB cache grew to 23 GB within
thirty calls of a study and the server was killed for memory. This cache counts every array it
holds, so `capacity_bytes` bounds the memory it takes.

Imported only in the server process (llm/llama_server_process.py), where llama_cpp is installed.
"""
from __future__ import annotations

from typing import Any

from llama_cpp.llama_cache import LlamaRAMCache


def entry_bytes(state: Any) -> int:
    """What one saved state holds: llama.cpp's state, the logits copy and the token ids."""
    return int(state.llama_state_size) + int(state.scores.nbytes) + int(state.input_ids.nbytes)


class CountingRAMCache(LlamaRAMCache):
    """LlamaRAMCache whose size is every byte its entries hold; the least recently used go first,
    and an entry larger than the whole capacity is not kept at all."""

    @property
    def cache_size(self) -> int:
        return sum(entry_bytes(state) for state in self.cache_state.values())
