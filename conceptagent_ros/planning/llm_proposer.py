"""Ask a chat model for the next skill call (the ReAct-style base agent of the paper)."""
from __future__ import annotations

from functools import lru_cache

from conceptagent_ros.errors import LLMError
from conceptagent_ros.llm.base import ChatMessage, ChatModel
from conceptagent_ros.paths import config_dir
from conceptagent_ros.planning.proposal import DecisionContext, Proposal, StepRecord, TokenUsage
from conceptagent_ros.planning.reply_parsing import parse_action_reply
from conceptagent_ros.skills.contract import SkillLibrary


@lru_cache(maxsize=16)
def load_prompt(name: str) -> str:
    return (config_dir() / "prompts" / f"{name}.txt").read_text(encoding="utf-8")


def skills_text(skills: SkillLibrary) -> str:
    return "\n".join(f"- {s.signature()}: {s.description}" for s in skills)


def history_text(history: tuple[StepRecord, ...]) -> str:
    if not history:
        return "(none yet)"
    lines = []
    for r in history:
        action = str(r.call) if r.call else "(no valid action)"
        lines.append(f"{r.step}. {action} -> {r.feedback[:600]}")
    return "\n".join(lines)


class LLMProposer:
    def __init__(self, chat: ChatModel, skills: SkillLibrary, temperature: float = 0.0):
        self.chat = chat
        self.name = chat.name
        self.temperature = temperature
        self.usage = TokenUsage()
        self.system = load_prompt("react_system").format(skills=skills_text(skills))

    def messages(self, context: DecisionContext) -> list[ChatMessage]:
        user = load_prompt("react_user").format(
            instruction=context.instruction, state=context.state_text, history=history_text(context.history)
        )
        return [ChatMessage("system", self.system), ChatMessage("user", user)]

    def propose(self, context: DecisionContext) -> Proposal:
        try:
            reply = self.chat.complete(self.messages(context), temperature=self.temperature, json_mode=True)
        except LLMError as e:
            return Proposal(None, error=f"the language model failed: {e}")
        self.usage.add(reply.prompt_tokens, reply.completion_tokens, reply.seconds)
        parsed = parse_action_reply(reply.text)
        return Proposal(parsed.call, raw=reply.text, thought=parsed.thought, error=parsed.error,
                        prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
                        llm_seconds=reply.seconds)
