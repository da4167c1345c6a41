"""Turn a language model's reply into a skill call, or say precisely why it cannot be used.

Replies are untrusted text: they may be empty, cut off, wrapped in prose or code fences, not JSON,
JSON of the wrong shape, enormous, or hostile. Nothing here evaluates them; they are only parsed.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from conceptagent_ros.skills.contract import SkillCall

MAX_REPLY_CHARS = 20000
_ID = re.compile(r"^[A-Za-z0-9_\-.]{1,80}$")


@dataclass(frozen=True)
class ParsedReply:
    call: SkillCall | None
    thought: str = ""
    error: str | None = None


def _json_objects(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    found = []
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text[match.start():])
        except json.JSONDecodeError:
            continue
        found.append(value)
        if len(found) >= 3:
            break
    return found


def _unfenced(text: str | None) -> str | None:
    """The reply, cut to MAX_REPLY_CHARS and without code fences; None when it is empty."""
    if text is None or not str(text).strip():
        return None
    return re.sub(r"```(?:json)?", "", str(text)[:MAX_REPLY_CHARS])


def parse_action_reply(text: str | None) -> ParsedReply:
    stripped = _unfenced(text)
    if stripped is None:
        return ParsedReply(None, error="the reply was empty")
    for obj in _json_objects(stripped):
        if not isinstance(obj, dict):
            continue
        thought = str(obj.get("thought", obj.get("reasoning", "")))[:2000]
        action = obj.get("action")
        if isinstance(action, dict):  # {"action": {"skill": ..., "args": [...]}}
            obj, action = action, None
        if action is None and "skill" in obj:
            skill, args = obj.get("skill"), obj.get("args", [])
            if not isinstance(skill, str) or not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                return ParsedReply(None, thought, '"skill" must be a string and "args" a list of object ids')
            return _checked(SkillCall(skill.strip().lower(), tuple(a.strip() for a in args)), thought)
        if isinstance(action, str):
            try:
                return _checked(SkillCall.parse(action), thought)
            except ValueError as e:
                return ParsedReply(None, thought, f'could not read "action": {e}')
        return ParsedReply(None, thought, 'the JSON object has no "action" string like "pick(apple_1)"')
    match = re.search(r"(?im)^\s*(?:action|next action)\s*[:=]\s*`?([a-z_]+\s*\([^()\n]*\))", stripped)
    if match:
        return _checked(SkillCall.parse(match.group(1)), "")
    if stripped.lstrip().startswith("{"):
        return ParsedReply(None, error="the reply is not valid JSON (cut off or malformed)")
    return ParsedReply(None, error='no JSON object found; answer {"thought": "...", "action": "skill(args)"}')


def _checked(call: SkillCall, thought: str) -> ParsedReply:
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,40}", call.skill):
        return ParsedReply(None, thought, f"{call.skill[:60]!r} is not a skill name")
    if len(call.args) > 6 or not all(_ID.match(a) for a in call.args):
        return ParsedReply(None, thought, "arguments must be a few object ids like apple_1")
    return ParsedReply(call, thought)


# -- replies of the other planner roles ------------------------------------------------------------
def first_json_object(text: str | None) -> dict[str, Any] | None:
    """The first JSON object in a reply (fences and prose around it allowed), or None."""
    return _first_object(text)


def _first_object(text: str | None) -> dict[str, Any] | None:
    stripped = _unfenced(text)
    if stripped is None:
        return None
    return next((o for o in _json_objects(stripped) if isinstance(o, dict)), None)


def parse_call_list(text: str | None, key: str) -> tuple[list[SkillCall], list[str]]:
    """`{"actions": ["pick(a)", ...]}` -> calls, plus one line per entry that could not be read."""
    obj = _first_object(text)
    if obj is None:
        return [], ["no JSON object found in the reply"]
    items = obj.get(key)
    if not isinstance(items, list):
        return [], [f'the JSON object has no "{key}" list']
    calls, errors = [], []
    for item in items[:60]:
        if not isinstance(item, str):
            errors.append(f"{str(item)[:60]!r} is not a skill call string")
            continue
        try:
            parsed = _checked(SkillCall.parse(item), "")
        except ValueError as e:
            errors.append(f"could not read {item[:60]!r}: {e}")
            continue
        if parsed.call is None:
            errors.append(parsed.error or f"could not read {item[:60]!r}")
        else:
            calls.append(parsed.call)
    return calls, errors


def parse_score(text: str | None, scale: float = 10.0) -> tuple[float | None, str]:
    """`{"justification": ..., "score": 7}` -> (0.7, justification); None when there is no number."""
    obj = _first_object(text)
    if obj is None:
        match = re.search(r"(?i)score\W{0,4}(\d+(?:\.\d+)?)", str(text or ""))
        return (min(1.0, max(0.0, float(match.group(1)) / scale)), "") if match else (None, "")
    why = str(obj.get("justification", obj.get("reason", "")))[:2000]
    score = obj.get("score")
    if isinstance(score, str):
        try:
            score = float(score)
        except ValueError:
            score = None
    if not isinstance(score, (int, float)) or isinstance(score, bool) or score != score:  # NaN
        return None, why
    return min(1.0, max(0.0, float(score) / scale)), why


def parse_choice(text: str | None, n_options: int) -> tuple[int | None, str | None]:
    """`{"choice": 2}` (1-based) -> index 1; or why it cannot be used."""
    obj = _first_object(text)
    value: Any = obj.get("choice") if obj is not None else None
    if value is None:
        match = re.search(r"(?i)(?:choice|option)\D{0,4}(\d+)", str(text or ""))
        value = match.group(1) if match else None
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None, 'no "choice" number in the reply'
    if not 1 <= number <= n_options:
        return None, f"choice {number} is not one of the options 1..{n_options}"
    return number - 1, None
