"""Every planner role answered by a chat model (any OpenAI-compatible server): prompt, call, parse.

A failing server or an unreadable reply never raises into the planner: the role returns an empty
answer with the reason, which the planner feeds back or falls back on. Every request names the
shape of its reply (planning/reply_schemas.py); a server that refuses that gets the prompt alone,
and the parser (planning/reply_parsing.py) reads what it can of a free reply.
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Sequence

from conceptagent_ros.errors import LLMError
from conceptagent_ros.llm.base import ChatMessage, ChatModel, ChatReply
from conceptagent_ros.llm.logit_bias import TokenIds, bias_for_words
from conceptagent_ros.planning import prompts, reply_schemas
from conceptagent_ros.planning.proposal import Critique, DecisionContext, TokenUsage
from conceptagent_ros.planning.reply_parsing import (
    parse_action_reply,
    parse_call_list,
    parse_choice,
    parse_score,
)
from conceptagent_ros.planning.roles import Candidates, Choice, PlanSamples, SamplingOptions
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall

log = logging.getLogger(__name__)


class ChatRoles:
    def __init__(self, chat: ChatModel, tokenizer: TokenIds | None = None, temperature: float = 0.0):
        self.chat = chat
        self.name = chat.name
        self.tokenizer = tokenizer
        self.temperature = temperature
        self.usage = TokenUsage()

    def _ask(self, messages: list[ChatMessage], **kwargs: object) -> ChatReply | str:
        """The reply, or the reason there is none."""
        try:
            reply = self.chat.complete(messages, json_mode=True, **kwargs)  # type: ignore[arg-type]
        except LLMError as e:
            return f"the language model failed: {e}"
        self.usage.add(reply.prompt_tokens, reply.completion_tokens, reply.seconds)
        return reply

    @staticmethod
    def _call_schema(context: DecisionContext) -> reply_schemas.Schema:
        return reply_schemas.call_schema(context.skills, context.state.types)

    def propose_actions(self, context: DecisionContext, k: int, planned: Sequence[SkillCall] = ()) -> Candidates:
        if k == 1 and not planned:
            call = (reply_schemas.choice_schema(context.choices) if context.choices
                    else self._call_schema(context))
            reply = self._ask(prompts.react_messages(context), temperature=self.temperature,
                              schema=reply_schemas.action_reply(call))
            if isinstance(reply, str):
                return Candidates((), error=reply)
            parsed = parse_action_reply(reply.text, context.skills)
            calls = (parsed.call,) if parsed.call else ()
            return Candidates(calls, reply.text, parsed.thought, parsed.error)
        # with grounding on, the candidates are decoded from the calls the agent would run after the
        # planned steps, as react's one call is (MCTS offers them for each node: mcts._expansion_context)
        call = reply_schemas.choice_schema(context.choices) if context.choices else self._call_schema(context)
        reply = self._ask(prompts.expand_messages(context, k, planned), temperature=self.temperature,
                          schema=reply_schemas.actions_reply(call, k))
        if isinstance(reply, str):
            return Candidates((), error=reply)
        proposed, errors = parse_call_list(reply.text, "actions", context.skills)
        unique = tuple(dict.fromkeys(proposed))[:k]
        return Candidates(unique, reply.text, error="; ".join(errors) or None)

    def critique(self, context: DecisionContext, plan: Sequence[SkillCall],
                 predicted: SymbolicState | None = None) -> Critique:
        reply = self._ask(prompts.critic_messages(context, plan, predicted), temperature=0.0,
                          schema=reply_schemas.critique_reply())
        if isinstance(reply, str):
            return Critique(0.0, reply)
        score, why = parse_score(reply.text)
        if score is None:
            return Critique(0.0, f"unreadable critique, scored 0: {reply.text[:200]}",
                            reply.prompt_tokens, reply.completion_tokens)
        return Critique(score, why, reply.prompt_tokens, reply.completion_tokens)

    def sample_plans(self, context: DecisionContext, options: SamplingOptions) -> PlanSamples:
        messages = prompts.plan_messages(context, options.examples, options.feedback)
        bias = self._bias(options.bias_words)
        schema = reply_schemas.plan_reply(self._call_schema(context))
        reply = self._ask(messages, temperature=options.temperature, n=options.n, logit_bias=bias or None,
                          schema=schema, seed=0)
        if isinstance(reply, str):
            return PlanSamples((), errors=(reply,))
        texts = list(reply.choices or (reply.text,))
        # Servers without `n` answer once: ask again, each sample with its own seed, until there are n.
        while len(texts) < options.n:
            more = self._ask(messages, temperature=options.temperature, logit_bias=bias or None, schema=schema,
                             seed=len(texts))
            if isinstance(more, str):
                break
            texts.append(more.text)
        plans: list[tuple[SkillCall, ...]] = []
        errors: list[str] = []
        for i, text in enumerate(texts):
            calls, problems = parse_call_list(text, "plan", context.skills)
            if calls:
                plans.append(tuple(calls))
            errors.extend(f"sample {i + 1}: {p}" for p in problems)
        return PlanSamples(tuple(plans), tuple(texts), tuple(errors))

    def choose(self, context: DecisionContext, options: Sequence[SkillCall]) -> Choice:
        reply = self._ask(prompts.decide_messages(context, options), temperature=0.0,
                          schema=reply_schemas.choice_reply(len(options)))
        if isinstance(reply, str):
            return Choice(None, error=reply)
        index, error = parse_choice(reply.text, len(options))
        return Choice(index, reply.text, error)

    def _bias(self, words: Sequence[str]) -> dict[int, float]:
        if not words:
            return {}
        if self.tokenizer is None:
            _warn_unbiased()
            return {}
        return bias_for_words(self.tokenizer, words)


@functools.cache
def _warn_unbiased() -> None:
    """Once per process: a bench builds a planner per episode, and the line said nothing new after the first."""
    log.warning("no CONCEPTAGENT_TOKENIZER set: planning without logit biases on observed objects")
