"""Grounded Decoding inside Hugging Face `generate()`: a `LogitsProcessor` adds the log of the
grounding functions' product to the language model's log-probabilities of the top-k tokens and
rules out every other token; greedy search or beam search (`num_beams`) as `generate()` does it.

Loading is the real `from_pretrained` of any local causal LM directory (set HF_HUB_OFFLINE=1 on
machines without the hub).
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.planning.planners.grounded_decoding.decoder import DecodeResult
from conceptagent_ros.planning.planners.grounded_decoding.grounding import (
    GroundingFunction,
    combined,
    is_complete,
)
from conceptagent_ros.planning.proposal import TokenUsage

try:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessor, LogitsProcessorList
except ImportError:  # the optional `local-llm` extra
    torch = None  # type: ignore[assignment]
    LogitsProcessor = object  # type: ignore[assignment,misc]


class GroundingLogitsProcessor(LogitsProcessor):  # type: ignore[misc,valid-type]
    def __init__(self, tokenizer: Any, prompt_length: int, grounding: Sequence[GroundingFunction], top_k: int = 20,
                 fallback_k: int = 2000):
        self.tokenizer = tokenizer
        self.fallback_k = fallback_k
        self.prompt_length = prompt_length
        self.grounding = list(grounding)
        self.top_k = top_k
        self.eos = tokenizer.eos_token_id
        self.special = set(tokenizer.all_special_ids)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        logp = torch.log_softmax(scores.float(), dim=-1)
        out = torch.full_like(scores, -math.inf)
        for row in range(input_ids.shape[0]):
            generated = input_ids[row, self.prompt_length:].tolist()
            text = self.tokenizer.decode(generated, skip_special_tokens=True)
            if is_complete(text):  # a whole call: the only continuation is the end
                out[row, self.eos] = 0.0
                continue
            # The LM's top-k first; if grounding rules all of them out, widen the search (a small
            # model may rank the one grounded continuation, such as `)`, low).
            for k in (self.top_k, self.fallback_k):
                top = torch.topk(logp[row], min(k, logp.shape[-1]))
                for value, token in zip(top.values.tolist(), top.indices.tolist()):
                    if token in self.special or not math.isinf(float(out[row, token])):
                        continue
                    candidate = self.tokenizer.decode(generated + [token], skip_special_tokens=True)
                    if candidate.strip() == text.strip():  # adds nothing (an unknown or empty token)
                        continue
                    g = combined(self.grounding, candidate) if candidate.strip() else 0.0
                    if g > 0.0:
                        out[row, token] = value + math.log(g)
                if not torch.isinf(out[row]).all():
                    break
            else:  # nothing grounded at all: end here rather than emit garbage
                out[row, self.eos] = 0.0
        return out


class HFGroundedDecoder:
    def __init__(self, path: str, usage: TokenUsage, device: str = "cpu"):
        if torch is None:
            raise ConfigError("--llm hf:PATH needs `pip install torch transformers` (the local-llm extra)")
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModelForCausalLM.from_pretrained(path)
            self.model = model.to(device).eval()  # type: ignore[arg-type]
        except OSError as e:
            raise ConfigError(f"cannot load a causal language model from {path!r}: {e}") from e
        if self.tokenizer.eos_token_id is None:
            raise ConfigError(f"the tokenizer at {path!r} has no end-of-sequence token")
        self.device = device
        self.usage = usage

    def decode(self, prompt: str, grounding: Sequence[GroundingFunction], beams: int = 1, top_k: int = 20,
               max_tokens: int = 32) -> DecodeResult:
        started = time.perf_counter()
        inputs = self.tokenizer(prompt, return_tensors="pt").to(self.device)
        length = inputs["input_ids"].shape[1]
        processors = LogitsProcessorList([GroundingLogitsProcessor(self.tokenizer, length, grounding, top_k)])
        with torch.no_grad():
            out = self.model.generate(
                **inputs, max_new_tokens=max_tokens, do_sample=False, num_beams=beams,
                logits_processor=processors, pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                eos_token_id=self.tokenizer.eos_token_id, output_scores=False, return_dict_in_generate=True)
        tokens = out.sequences[0, length:].tolist()
        text = str(self.tokenizer.decode(tokens, skip_special_tokens=True)).strip()
        self.usage.add(length, len(tokens), time.perf_counter() - started)
        return DecodeResult(text, is_complete(text), 0.0, 0.0, len(tokens))


def ungrounded_generate(decoder: HFGroundedDecoder, prompt: str, max_tokens: int = 16) -> str:
    """Plain greedy `generate()` with no grounding (the paper's "Ungrounded" baseline)."""
    inputs = decoder.tokenizer(prompt, return_tensors="pt")
    with torch.no_grad():
        out = decoder.model.generate(**inputs, max_new_tokens=max_tokens, do_sample=False,
                                     pad_token_id=decoder.tokenizer.eos_token_id)
    return str(decoder.tokenizer.decode(out[0, inputs["input_ids"].shape[1]:].tolist(), skip_special_tokens=True))
