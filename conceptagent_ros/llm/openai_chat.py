"""Any OpenAI-compatible chat server through the `openai` package (vLLM, llama.cpp, Ollama, OpenAI).

Honours OPENAI_BASE_URL and OPENAI_API_KEY. Retries 429, 5xx, timeouts and unreadable bodies with
exponential backoff, counts tokens per call, and caches replies on disk when given a cache.

A reply's shape (ReplySchema) goes out as `response_format`: OpenAI's `{"type": "json_schema", ...}`
(OpenAI, vLLM, Ollama, llama.cpp's own server), or `{"type": "json_object", "schema": ...}` for
llama-cpp-python's server, which knows only that spelling (CONCEPTAGENT_LLM_SCHEMA picks: json_schema,
json_object or off). A server that refuses OpenAI's spelling (a 400 or 422 naming the field or its
schema; llama-cpp-python answers a 500 naming the field) is asked again in llama-cpp-python's; one
that refuses that too is asked again without the field, and from then on gets the prompt-only format.
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
from conceptagent_ros.llm.base import ChatMessage, ChatReply, ReplySchema, estimate_tokens
from conceptagent_ros.llm.cache import ResponseCache

log = logging.getLogger(__name__)
SCHEMA_STYLES = ("json_schema", "json_object", "off")
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
        schema_style: str = "json_schema",
        name: str | None = None,
    ):
        if schema_style not in SCHEMA_STYLES:
            raise LLMError(f"unknown schema style {schema_style!r}; one of {', '.join(SCHEMA_STYLES)}")
        self.model = model
        self.name = name or f"openai:{model}"
        self.schema_style = schema_style
        self.schema_refused = ""  # why the server refused response_format; then prompt-only
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
    def from_env(cls, model: str, base_url: str | None = None, name: str | None = None,
                 schema_style: str = "json_schema", timeout: float = 60.0) -> OpenAIChatModel:
        cache_dir = os.environ.get("CONCEPTAGENT_LLM_CACHE")
        return cls(
            model,
            base_url=base_url,
            timeout=float(os.environ.get("CONCEPTAGENT_LLM_TIMEOUT", str(timeout))),
            retries=int(os.environ.get("CONCEPTAGENT_LLM_RETRIES", "3")),
            cache=ResponseCache(cache_dir) if cache_dir else None,
            schema_style=os.environ.get("CONCEPTAGENT_LLM_SCHEMA", schema_style),
            name=name,
        )

    def response_format(self, schema: ReplySchema | None, json_mode: bool) -> dict[str, Any] | None:
        if schema is not None and not self.schema_refused and self.schema_style != "off":
            if self.schema_style == "json_object":
                return {"type": "json_object", "schema": schema.schema}
            return {"type": "json_schema", "json_schema": {"name": schema.name, "schema": schema.schema,
                                                           "strict": True}}
        if json_mode and not self.schema_refused:
            return {"type": "json_object"}
        return None

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
        n: int = 1,
        logit_bias: Mapping[int, float] | None = None,
        schema: ReplySchema | None = None,
        seed: int | None = None,
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
        if seed is not None:
            request["seed"] = int(seed)
        response_format = self.response_format(schema, json_mode)
        if response_format is not None:
            request["response_format"] = response_format
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
            except (*RETRYABLE, openai.APIStatusError) as e:
                if isinstance(e, openai.APIStatusError) and "response_format" in request and _refuses_format(e):
                    if schema is not None and self.schema_style == "json_schema":
                        # llama-cpp-python's server knows a schema only as {"type": "json_object", "schema": ...}
                        log.warning("%s refused a json_schema response_format (%s); trying its json_object "
                                    "spelling", self.base_url, _short(e))
                        self.schema_style = "json_object"
                    else:
                        self.schema_refused = _short(e)
                        log.warning("%s refused response_format (%s); asking for prompt-only replies from now on",
                                    self.base_url, self.schema_refused)
                    return self.complete(messages, temperature=temperature, max_tokens=max_tokens,
                                         json_mode=json_mode, n=n, logit_bias=logit_bias, schema=schema, seed=seed)
                if not isinstance(e, RETRYABLE):  # 4xx other than 429: retrying will not help
                    assert isinstance(e, openai.APIStatusError)
                    raise LLMError(f"{self.base_url} refused the request ({e.status_code}): {_short(e)}") from e
                last_error = e
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


def _refuses_format(error: openai.APIStatusError) -> bool:
    """A 400 or 422 that names the field or its schema: the server does not know it (or this schema).
    llama-cpp-python's server answers its validation errors with a 500 that names the field."""
    text = str(error).lower()
    if error.status_code == 500:
        return "response_format" in text
    return error.status_code in (400, 422) and any(w in text for w in ("response_format", "json_schema", "schema",
                                                                        "grammar"))


def _short(error: Exception | None) -> str:
    text = " ".join(str(error).split()) if error else "unknown error"
    return f"{type(error).__name__}: {text[:200]}" if error else text
