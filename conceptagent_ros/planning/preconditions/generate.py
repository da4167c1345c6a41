"""LLM-generated preconditions (ConceptAgent III-C1 and its appendix VII): one prompt per skill,
the reply parsed by unified-planning and validated (known predicates, right arity, bound
variables), invalid replies retried with the parser's error, results cached on disk."""
from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from conceptagent_ros.errors import LLMError, PDDLError, PreconditionGenerationError
from conceptagent_ros.llm.base import ChatMessage, ChatModel
from conceptagent_ros.planning.pddl.domain import PDDLDomain, normalize_formula
from conceptagent_ros.planning.prompts import load_prompt
from conceptagent_ros.planning.reply_schemas import precondition_reply
from conceptagent_ros.scene.symbolic import PredicateSpec
from conceptagent_ros.skills.contract import SkillLibrary, SkillSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GeneratedPrecondition:
    skill: str
    formula: str
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    cached: bool = False


def extract_precondition(reply: str) -> str:
    """The formula inside `(:precondition ...)`, or the first balanced s-expression."""
    text = re.sub(r"```(?:pddl|lisp)?", "", reply or "")
    start = text.find(":precondition")
    start = text.find("(", start + len(":precondition")) if start >= 0 else text.find("(")
    if start < 0:
        raise PDDLError("no PDDL formula found in the reply")
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return " ".join(text[start:i + 1].split())
    raise PDDLError("the formula's parentheses are not balanced (the reply may be cut off)")


def validate_precondition(skill: SkillSpec, formula: str, predicates: Sequence[PredicateSpec], types: Sequence[str]) -> str:
    """Parse the formula as the skill's precondition with unified-planning; raise PDDLError if invalid."""
    formula = normalize_formula(formula)
    PDDLDomain(predicates, [skill], types, {skill.name: formula}, name="validation")
    return formula


def cache_key(skill: SkillSpec, predicates: Sequence[PredicateSpec], model: str) -> str:
    payload = json.dumps([skill.name, skill.description, [p.name for p in skill.params],
                          [p.signature() for p in predicates], model])
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


class PreconditionGenerator:
    def __init__(self, chat: ChatModel, predicates: Sequence[PredicateSpec], types: Sequence[str],
                 retries: int = 2, cache_dir: Path | None = None):
        self.chat = chat
        self.predicates = tuple(predicates)
        self.types = list(types)
        self.retries = retries
        self.cache_dir = cache_dir
        predicate_lines = "\n".join(f"- {p.signature()}: {p.description}" for p in self.predicates)
        self.system = load_prompt("precondition_system").format(predicates=predicate_lines)

    def messages(self, skill: SkillSpec) -> list[ChatMessage]:
        params = "\n".join(f"?{p.name}: {p.description}" for p in skill.params) or "(none)"
        user = load_prompt("precondition_user").format(signature=skill.signature(), description=skill.description,
                                                       parameters=params)
        return [ChatMessage("system", self.system), ChatMessage("user", user)]

    def generate(self, skill: SkillSpec) -> GeneratedPrecondition:
        cache_file = self.cache_dir / f"{skill.name}-{cache_key(skill, self.predicates, self.chat.name)}.json" \
            if self.cache_dir else None
        if cache_file is not None and cache_file.is_file():
            data = json.loads(cache_file.read_text())
            return GeneratedPrecondition(skill.name, data["formula"], data["attempts"], 0, 0, cached=True)
        messages = self.messages(skill)
        # the reply's shape: a formula over the predicates and the skill's own parameters
        schema = precondition_reply([p.name for p in self.predicates] + list(self.types)
                                    + [f"?{p.name}" for p in skill.params])
        prompt_tokens = completion_tokens = 0
        last_error = ""
        for attempt in range(1, self.retries + 2):
            try:
                reply = self.chat.complete(messages, temperature=0.0, schema=schema)
            except LLMError as e:
                raise PreconditionGenerationError(f"{skill.name}: the language model failed: {e}") from e
            prompt_tokens += reply.prompt_tokens
            completion_tokens += reply.completion_tokens
            try:
                formula = validate_precondition(skill, extract_precondition(reply.text), self.predicates, self.types)
            except PDDLError as e:
                last_error = str(e)
                log.info("%s: invalid precondition (attempt %d): %s", skill.name, attempt, last_error)
                messages = messages + [
                    ChatMessage("assistant", reply.text[:4000]),
                    ChatMessage("user", f"That precondition is invalid: {last_error}\nUse only the listed predicates "
                                        "with their exact arity and the action's parameters. Answer again."),
                ]
                continue
            result = GeneratedPrecondition(skill.name, formula, attempt, prompt_tokens, completion_tokens)
            if cache_file is not None:
                cache_file.parent.mkdir(parents=True, exist_ok=True)
                cache_file.write_text(json.dumps({"formula": formula, "attempts": attempt}))
            return result
        raise PreconditionGenerationError(
            f"{skill.name}: no valid precondition after {self.retries + 1} attempts; last error: {last_error}")

    def generate_all(self, skills: SkillLibrary, only: Sequence[str] | None = None,
                     progress: Callable[[str], None] | None = None) -> list[GeneratedPrecondition]:
        results = []
        for skill in skills.actionable():
            if only and skill.name not in only:
                continue
            if progress:
                progress(skill.name)
            results.append(self.generate(skill))
        return results
