"""The shape of each planner role's reply, as a JSON schema sent with the request (`response_format`).

A server that honours it (OpenAI, vLLM, llama.cpp, Ollama) can only write a reply of that shape:
a small model cannot answer prose, two calls in one string, or an id it made up. A skill call is
one of the well-formed calls over the objects the robot knows (every skill, its arity, known ids):
an `enum` while they are few enough, else a `pattern` (a grammar of the same calls). Well-formed is
not feasible: whether a call's preconditions hold stays the verifier's question, so a planner arm
without grounding still gets and runs infeasible calls. A grounded agent's ReAct step is the
exception: its enum is the agent's feasible calls (`choice_schema`), grounding in the decoder as
Grounded Decoding and SayCan put it.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Sequence
from typing import Any

from conceptagent_ros.llm.base import ReplySchema
from conceptagent_ros.skills.contract import SkillLibrary

ENUM_LIMIT = 400  # above this many calls the schema carries a pattern instead of listing them
THOUGHT_CHARS = 300  # a bounded thought: small models on CPU otherwise spend seconds on prose
JUSTIFICATION_CHARS = 300

Schema = dict[str, Any]


def call_schema(skills: SkillLibrary, objects: Collection[str], limit: int = ENUM_LIMIT) -> Schema:
    """A string that is one well-formed call, e.g. `place(apple_1, fridge_1)` or `done()`."""
    ids = sorted(objects)
    count = sum(len(ids) ** s.arity for s in skills)
    if count <= limit:
        calls = [f"{s.name}({', '.join(args)})" for s in skills for args in itertools.product(ids, repeat=s.arity)]
        return {"type": "string", "enum": calls}
    return {"type": "string", "pattern": call_pattern(skills, ids)}


def choice_schema(choices: Sequence[object]) -> Schema:
    """One of the given calls exactly (a grounded agent's feasible calls; see DecisionContext.choices)."""
    return {"type": "string", "enum": list(dict.fromkeys(str(c) for c in choices))}


def call_pattern(skills: SkillLibrary, ids: Sequence[str]) -> str:
    any_id = "(" + "|".join(re.escape(i) for i in ids) + ")" if ids else "()"
    alternatives = []
    for skill in skills:
        args = ", ".join([any_id] * skill.arity)
        alternatives.append(re.escape(skill.name) + r"\(" + args + r"\)")
    return "^(" + "|".join(alternatives) + ")$"


def _object(properties: Schema) -> Schema:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _text(max_chars: int) -> Schema:
    return {"type": "string", "maxLength": max_chars}


def action_reply(call: Schema) -> ReplySchema:
    """ReAct's one next action. No thought field: on the 1.5B model the thought copied the prompt's
    example word for word ("... not within reach, so I go to it first") and the action followed
    the copied words, not the observation (docs/benchmarks/local_model/)."""
    return ReplySchema("next_action", _object({"action": call}))


def actions_reply(call: Schema, k: int) -> ReplySchema:
    """MCTS expansion: up to k different next actions, best first; no thought, as for ReAct's one
    action (action_reply)."""
    return ReplySchema("next_actions", _object({
        "actions": {"type": "array", "items": call, "minItems": 1, "maxItems": max(1, k)}}))


def plan_reply(call: Schema, max_steps: int = 20) -> ReplySchema:
    """LLM-Planner's plan and Tree-Planner's samples: the calls in order, ending with done()."""
    return ReplySchema("plan", _object({
        "plan": {"type": "array", "items": call, "minItems": 1, "maxItems": max_steps}}))


def critique_reply() -> ReplySchema:
    return ReplySchema("critique", _object({
        "justification": _text(JUSTIFICATION_CHARS), "score": {"type": "integer", "enum": list(range(11))}}))


def choice_reply(n_options: int) -> ReplySchema:
    return ReplySchema("choice", _object({
        "thought": _text(THOUGHT_CHARS), "choice": {"type": "integer", "enum": list(range(1, n_options + 1))}}))


FORMULA_CHARS = 800
_CONNECTIVES = ("and", "or", "not", "exists", "forall", "imply", "when", "=", "-")


def formula_schema(words: Collection[str]) -> Schema:
    """A PDDL formula over given words (predicates, object ids, kinds) and `?variables`: a grammar of
    its tokens; whether it parses and binds its variables is the PDDL reader's question after."""
    tokens = sorted({*_CONNECTIVES, *words}, key=lambda w: (-len(w), w))  # longest first: `open` before `o`
    token = "(" + "|".join(re.escape(t) for t in tokens) + r"|\?[a-z][a-z0-9_]*|\(|\)| )"
    return {"type": "string", "pattern": r"^\(" + token + r"*\)$", "maxLength": FORMULA_CHARS}


def goal_reply(words: Collection[str]) -> ReplySchema:
    """Goal translation: `{"goal": "(in apple_1 fridge_1)"}`."""
    return ReplySchema("goal", _object({"goal": formula_schema(words)}))


def precondition_reply(words: Collection[str]) -> ReplySchema:
    """Precondition generation: `{"precondition": "(and (near ?obj) ...)"}`."""
    return ReplySchema("precondition", _object({"precondition": formula_schema(words)}))
