"""One chat interface for every language model backend."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class ChatMessage:
    role: str  # system | user | assistant
    content: str


@dataclass(frozen=True)
class ChatReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    model: str = ""
    cached: bool = False
    choices: tuple[str, ...] = ()  # all n choices (text is choices[0])


@dataclass(frozen=True)
class ReplySchema:
    """The shape a reply must have, as a JSON schema; `name` is what OpenAI's `json_schema.name` carries.
    Sent as `response_format`, it constrains what a server lets its model write."""

    name: str
    schema: dict[str, Any]


class ChatModel(Protocol):
    name: str

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
    ) -> ChatReply: ...


def estimate_tokens(text: str) -> int:
    """For servers that report no usage: about four characters a token."""
    return max(1, len(text) // 4)
