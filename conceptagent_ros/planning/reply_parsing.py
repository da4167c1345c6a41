"""Turn a language model's reply into a skill call, or say precisely why it cannot be used.

Replies are untrusted text: they may be empty, cut off, wrapped in prose or code fences, not JSON,
JSON of the wrong shape, enormous, or hostile. Nothing here evaluates them; they are only parsed.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from conceptagent_ros.skills.contract import SkillCall, SkillLibrary

MAX_REPLY_CHARS = 20000
_ID = re.compile(r"^[A-Za-z0-9_\-.]{1,80}$")
_CALL = re.compile(r"([A-Za-z_][\w-]*)\s*\(([^()]*)\)")
# what may stand between calls of a list a model wrote in one string: "a(x); b(y)", "a(x) then b(y)"
_BETWEEN = re.compile(r"(?i)^(?:\s|[;,.|>-]|\d+\.|then|and|next)*$")


@dataclass(frozen=True)
class ParsedReply:
    call: SkillCall | None
    thought: str = ""
    error: str | None = None


def read_call(text: str, skills: SkillLibrary | None = None) -> tuple[SkillCall | None, str]:
    """One call from what a model wrote for one, and a note on how it was read; or (None, why not) in
    words the model can act on.

    Takes what the model means where that is unambiguous: the first of several well-formed calls
    ("one call at a time"), `name=value` arguments. Refuses, saying exactly what is wrong, a call
    written with its signature (`open(obj)`), a wrong number of arguments, an unknown skill, and
    calls mixed with anything else (nothing in the text is ever evaluated)."""
    text = text.strip().strip("`").strip()
    matches = list(_CALL.finditer(text))
    if not matches:
        try:
            call = SkillCall.parse(text)  # `pick apple_1`
        except ValueError as e:
            return None, str(e)
        return _checked_call(call, skills)
    first = matches[0]
    rest = text[first.end():]
    if first.start() > 0 and not _BETWEEN.match(text[:first.start()]):
        return None, f"write only the call, like {first.group(0)}; found text before it: {text[:first.start()][:60]!r}"
    gaps = [text[a.end():b.start()] for a, b in zip(matches, matches[1:])] + [text[matches[-1].end():]]
    if rest.lstrip().startswith(":"):  # "open(obj): open the fridge" (a line of the skill list)
        matches = [first]
    elif not all(_BETWEEN.match(gap) for gap in gaps):
        return None, f"write one call like pick(apple_1) and nothing else; got {text[:80]!r}"
    call = SkillCall(first.group(1).lower(), tuple(_argument(a) for a in first.group(2).split(",") if a.strip()))
    checked, error = _checked_call(call, skills)
    if checked is None:
        return None, error
    if len(matches) > 1:
        return checked, f"one call at a time: took {checked}, the first of {len(matches)} calls written"
    return checked, ""


def _argument(text: str) -> str:
    """`apple_1`, `'apple_1'`, `obj=apple_1` -> apple_1."""
    text = text.strip().strip("'\"` ")
    if "=" in text:
        text = text.split("=", 1)[1].strip().strip("'\"` ")
    return text


def _checked_call(call: SkillCall, skills: SkillLibrary | None) -> tuple[SkillCall | None, str]:
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,40}", call.skill):
        return None, f"{call.skill[:60]!r} is not a skill name"
    spec = skills.get(call.skill) if skills is not None else None
    if skills is not None and spec is None:
        return None, f"{call.skill} is not a skill; the skills are {', '.join(skills.names())}"
    if spec is not None:
        params = [p.name for p in spec.params]
        if params and any(a in params for a in call.args):
            return None, (f"{spec.signature()} is the skill's signature: call it with object ids from the "
                          f"observation in place of {', '.join(params)}")
        if len(call.args) != spec.arity:
            return None, (f"{spec.signature()} takes {spec.arity} object id{'s' if spec.arity != 1 else ''}, "
                          f"not {len(call.args)}")
    if len(call.args) > 6 or not all(_ID.match(a) for a in call.args):
        return None, "arguments must be a few object ids like apple_1"
    return call, ""


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


def parse_action_reply(text: str | None, skills: SkillLibrary | None = None) -> ParsedReply:
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
            return _checked(SkillCall(skill.strip().lower(), tuple(a.strip() for a in args)), thought, skills)
        if isinstance(action, str):
            call, why = read_call(action, skills)
            if call is None:
                return ParsedReply(None, thought, f'could not use "action": {why}')
            return ParsedReply(call, f"({why}) {thought}" if why else thought)
        return ParsedReply(None, thought, 'the JSON object has no "action" string like "pick(apple_1)"')
    match = re.search(r"(?im)^\s*(?:action|next action)\s*[:=]\s*`?([a-z_]+\s*\([^()\n]*\))", stripped)
    if match:
        return _checked(SkillCall.parse(match.group(1)), "", skills)
    if stripped.lstrip().startswith("{"):
        return ParsedReply(None, error="the reply is not valid JSON (cut off or malformed)")
    return ParsedReply(None, error='no JSON object found; answer {"thought": "...", "action": "skill(args)"}')


def _checked(call: SkillCall, thought: str, skills: SkillLibrary | None = None) -> ParsedReply:
    checked, why = _checked_call(call, skills)
    return ParsedReply(checked, thought, None if checked else why)


# -- replies of the other planner roles ------------------------------------------------------------
def first_json_object(text: str | None) -> dict[str, Any] | None:
    """The first JSON object in a reply (fences and prose around it allowed), or None."""
    return _first_object(text)


def _first_object(text: str | None) -> dict[str, Any] | None:
    stripped = _unfenced(text)
    if stripped is None:
        return None
    return next((o for o in _json_objects(stripped) if isinstance(o, dict)), None)


def parse_call_list(text: str | None, key: str,
                    skills: SkillLibrary | None = None) -> tuple[list[SkillCall], list[str]]:
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
        call, why = read_call(item, skills)
        if call is None:
            errors.append(f"could not use {item[:60]!r}: {why}")
        else:
            calls.append(call)
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
