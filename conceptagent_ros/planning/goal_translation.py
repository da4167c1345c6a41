"""Instruction -> PDDL goal by the configured language model, for what the no-model translator
(planning/free_text/) refuses.

The reply is untrusted: it is parsed, and the goal is checked against the scene (unknown objects,
kinds or predicates, wrong arity). A problem goes back to the model once, with the parser's
words; a second bad reply is a clear error rather than a guess, because a wrong goal sends the
robot after the wrong thing, which is worse than a refusal.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from conceptagent_ros.errors import InstructionError, LLMError, PDDLError
from conceptagent_ros.llm.base import ChatMessage, ChatModel
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.planning.prompts import load_prompt
from conceptagent_ros.planning.reply_parsing import first_json_object
from conceptagent_ros.planning.reply_schemas import goal_reply
from conceptagent_ros.scene.symbolic import PredicateSpec

MAX_OBJECTS_IN_PROMPT = 300
ATTEMPTS = 2  # the first reply, and one more after feedback


def goal_messages(instruction: str, predicates: Sequence[PredicateSpec], categories: Sequence[str],
                  objects: Mapping[str, str], feedback: str = "") -> list[ChatMessage]:
    listed = sorted(objects.items())[:MAX_OBJECTS_IN_PROMPT]
    system = load_prompt("goal_system").format(
        predicates="\n".join(f"- {p.signature()}: {p.description}" for p in predicates),
        categories=", ".join(sorted(categories)),
        objects=", ".join(f"{oid} ({kind})" for oid, kind in listed) or "(none yet)",
    )
    user = load_prompt("goal_user").format(instruction=instruction, feedback=feedback)
    return [ChatMessage("system", system), ChatMessage("user", user.strip())]


def _goal_text(reply: str) -> str:
    data = first_json_object(reply)
    if data is not None and isinstance(data.get("goal"), str) and data["goal"].strip():
        return data["goal"].strip()
    match = re.search(r"\(.*\)", reply or "", flags=re.S)  # a bare formula is accepted too
    if match is None:
        raise PDDLError('no goal found; answer with {"goal": "<PDDL formula>"}')
    return match.group(0)


def translate_goal(instruction: str, model: ChatModel, domain: PDDLDomain, predicates: Sequence[PredicateSpec],
                   objects: Mapping[str, str], types: Mapping[str, str]) -> Goal:
    """The goal the model writes for the instruction, checked; InstructionError when it cannot."""
    feedback = ""
    problem = ""
    schema = goal_reply([p.name for p in predicates] + list(domain.types) + list(objects))
    for _ in range(ATTEMPTS):
        try:
            reply = model.complete(goal_messages(instruction, predicates, domain.types, objects, feedback),
                                   json_mode=True, temperature=0.0, schema=schema)
        except LLMError as e:
            raise InstructionError(f"could not translate the instruction into a goal: {e}") from e
        try:
            text = _goal_text(reply.text)
            return Goal.parse(domain, text, types)
        except PDDLError as e:
            problem = str(e)
            feedback = (f"Your previous goal could not be used: {problem}. Use only the predicates, kinds and "
                        "object ids listed.")
    raise InstructionError(f"the language model gave no usable goal for {instruction[:120]!r} ({problem}); "
                           "rephrase the instruction or pass a PDDL goal")
