"""Any OpenAI-compatible chat server through the `openai` package (vLLM, llama.cpp, Ollama, OpenAI).

Honours OPENAI_BASE_URL and OPENAI_API_KEY. Retries 429, 5xx, timeouts and unreadable bodies with
exponential backoff, counts tokens per call, and caches replies on disk when given a cache.
"""
from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import openai

from conceptagent_ros.errors import LLMError
from conceptagent_ros.llm.base import ChatMessage, ChatReply, estimate_tokens
from conceptagent_ros.llm.cache import ResponseCache

log = logging.getLogger(__name__)
RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError)


class OpenAIChatModel:
    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 1.0,
        cache: ResponseCache | None = None,
    ):
        self.model = model
        self.name = f"openai:{model}"
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.retries = retries
        self.backoff = backoff
        self.cache = cache
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        # Local servers need no key, but the client insists on one.
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=timeout, max_retries=0)

    @classmethod
    def from_env(cls, model: str) -> OpenAIChatModel:
        cache_dir = os.environ.get("CONCEPTAGENT_LLM_CACHE")
        return cls(
            model,
            timeout=float(os.environ.get("CONCEPTAGENT_LLM_TIMEOUT", "60")),
            retries=int(os.environ.get("CONCEPTAGENT_LLM_RETRIES", "3")),
            cache=ResponseCache(cache_dir) if cache_dir else None,
        )

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
        n: int = 1,
        logit_bias: Mapping[int, float] | None = None,
    ) -> ChatReply:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": self.temperature if temperature is None else temperature,
            "max_tokens": max_tokens or self.max_tokens,
            "n": n,
        }
        if logit_bias:
            request["logit_bias"] = {str(k): float(v) for k, v in sorted(logit_bias.items())}
        if json_mode:
            request["response_format"] = {"type": "json_object"}
        if self.cache is not None:
            hit = self.cache.get({**request, "base_url": self.base_url})
            if hit is not None:
                return ChatReply(hit["choices"][0], hit["prompt_tokens"], hit["completion_tokens"], 0.0,
                                 self.model, True, tuple(hit["choices"]))
        start = time.perf_counter()
        last_error: Exception | None = None
        for attempt in range(self.retries + 1):
            try:
                response = self.client.chat.completions.create(**request)
                choices = tuple((c.message.content or "") for c in (response.choices or []))
                if not choices:
                    raise LLMError("the server returned no choices")
                break
            except RETRYABLE as e:
                last_error = e
            except openai.APIStatusError as e:  # 4xx other than 429: retrying will not help
                raise LLMError(f"{self.base_url} refused the request ({e.status_code}): {_short(e)}") from e
            except (ValueError, TypeError, AttributeError, LLMError) as e:  # unreadable or empty body
                last_error = e
            if attempt < self.retries:
                delay = self.backoff * (2 ** attempt) * (1 + 0.25 * random.random())
                log.warning("LLM call failed (%s); retrying in %.1f s", _short(last_error), delay)
                time.sleep(delay)
        else:
            raise LLMError(f"no usable reply from {self.base_url} (model {self.model}) after "
                           f"{self.retries + 1} attempts: {_short(last_error)}") from last_error
        seconds = time.perf_counter() - start
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0) or sum(estimate_tokens(m.content) for m in messages)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0) or sum(estimate_tokens(c) for c in choices)
        if self.cache is not None:
            self.cache.put({**request, "base_url": self.base_url},
                           {"choices": list(choices), "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens})
        return ChatReply(choices[0], prompt_tokens, completion_tokens, seconds, self.model, False, choices)


def _short(error: Exception | None) -> str:
    text = " ".join(str(error).split()) if error else "unknown error"
    return f"{type(error).__name__}: {text[:200]}" if error else text
