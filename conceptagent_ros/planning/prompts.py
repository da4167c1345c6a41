"""The prompts of every planner role, built in one place from the files in config/prompts/.

The chat backends send these messages; the simulated backend builds the very same messages to
count the tokens a real model would have read, so token figures compare across backends.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from conceptagent_ros.llm.base import ChatMessage
from conceptagent_ros.paths import config_dir
from conceptagent_ros.planning.goal_left import goal_text
from conceptagent_ros.planning.proposal import DecisionContext, StepRecord
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary


@lru_cache(maxsize=32)
def load_prompt(name: str) -> str:
    return (config_dir() / "prompts" / f"{name}.txt").read_text(encoding="utf-8")


def skills_text(skills: SkillLibrary) -> str:
    return "\n".join(f"- {s.signature()}: {s.description}" for s in skills)


def history_text(history: Sequence[StepRecord], newly_observed: bool = True) -> str:
    """The steps so far, one line each; `newly_observed`: with what each step brought into view."""
    if not history:
        return "(none yet)"
    lines = []
    for r in history:
        action = str(r.call) if r.call else "(no valid action)"
        lines.append(f"{r.step}. {action} -> {r.said(newly_observed)[:600]}")
    return "\n".join(lines)


def numbered(calls: Sequence[SkillCall], empty: str = "(none)") -> str:
    return "\n".join(f"{i}. {c}" for i, c in enumerate(calls, 1)) if calls else empty


@dataclass(frozen=True)
class PlanExample:
    """An in-context example for plan generation: an instruction and the plan that carried it out."""

    instruction: str
    plan: tuple[SkillCall, ...]
    source: str = ""  # the task it was recorded from (left out when planning that task)


def _system(name: str, skills: SkillLibrary) -> ChatMessage:
    """A role's system prompt; `{rules}` is the agent's rules and worked examples (agent_rules.txt),
    one text for the roles that choose actions (react, MCTS expansion), so both read the same."""
    text = load_prompt(name)
    if "{skills}" not in text:
        return ChatMessage("system", text)
    rules = load_prompt("agent_rules").rstrip("\n") if "{rules}" in text else ""
    return ChatMessage("system", text.format(skills=skills_text(skills), rules=rules))


def _role_messages(role: str, context: DecisionContext, newly_observed: bool = True,
                   **extra: object) -> list[ChatMessage]:
    """`{role}_system` and `{role}_user` filled with the instruction, observation, history and what
    is left of the goal (and extras); a template uses the fields it names, and what is left of the
    goal is worked out only for one that names it."""
    template = load_prompt(f"{role}_user")
    user = template.format(
        instruction=context.instruction, state=context.state_text, history=history_text(context.history, newly_observed),
        goal=goal_text(context) if "{goal}" in template else "", **extra)
    return [_system(f"{role}_system", context.skills), ChatMessage("user", user)]


def react_messages(context: DecisionContext) -> list[ChatMessage]:
    """ReAct's one request: instruction, the steps so far, the observation, the instruction again.
    Everything before the observation only grows at its end, so the server's prompt cache keeps it
    from one step to the next. One user message, not a conversation of earlier turns: on the 1.5B
    model, a model shown its own earlier answers as turns copies their pattern (navigate_to after
    navigate_to) instead of reading the observation. The calls possible now (context.choices) go
    in the reply's schema, not in the prompt: listed, the 1.5B model took the first of them nearly
    every time (docs/benchmarks/local_model/). The steps so far leave out what each brought into
    view (the observation lists it): named last in a step's line, a thing just seen drew the 1.5B
    model to pick it whatever the goal (an egg from the fridge it opened for the apple)."""
    return _role_messages("react", context, newly_observed=False)


def expand_messages(context: DecisionContext, k: int, planned: Sequence[SkillCall]) -> list[ChatMessage]:
    """MCTS expansion: react's rules, examples and layout (the steps so far without what each
    brought into view, the instruction again after the observation), asking for up to k calls after
    the planned steps. Asked in the old layout (no rules, a thought before the calls), the 1.5B
    model listed a drive first beside the apple it was sent for (docs/benchmarks/local_model/)."""
    return _role_messages("expand", context, newly_observed=False, planned=numbered(planned), k=k)


def critic_messages(context: DecisionContext, plan: Sequence[SkillCall],
                    predicted: SymbolicState | None = None) -> list[ChatMessage]:
    """The critic's request; `predicted`: the state after the plan as the skills' effects predict it
    (grounded search knows it), told as what would be left to do then, so that the model need not
    imagine the plan's outcome. The 1.5B model misreads the state with it or without it (a robot
    'already holding the apple' it had not picked) and scores most plans 0 or 0.2
    (docs/benchmarks/local_model/)."""
    after = ""
    if predicted is not None:
        left = goal_text(replace(context, state=predicted))
        after = f"\nStill to do after the planned sequence (predicted from the skills' effects): {left}\n"
    return _role_messages("critic", context, newly_observed=False, plan=numbered(plan), after=after)


def plan_messages(context: DecisionContext, examples: Sequence[PlanExample], feedback: str = "") -> list[ChatMessage]:
    shots = "".join(load_prompt("plan_example").format(
        instruction=e.instruction, plan=", ".join(map(str, e.plan))) for e in examples)
    completed = [r.call for r in context.history if r.executed and r.success and r.call is not None]
    user = load_prompt("plan_user").format(
        examples=shots, instruction=context.instruction,
        completed=", ".join(map(str, completed)) or "(none)",
        objects=", ".join(sorted(context.graph.objects)) or "(none)", goal=goal_text(context),
        feedback=f"Feedback: {feedback}\n" if feedback else "")
    return [_system("plan_system", context.skills), ChatMessage("user", user)]


def decide_messages(context: DecisionContext, options: Sequence[SkillCall]) -> list[ChatMessage]:
    return _role_messages("decide", context, options=numbered(options))


def grounded_decoding_prompt(context: DecisionContext) -> str:
    done = [str(r.call) for r in context.history if r.executed and r.success and r.call is not None]
    return load_prompt("grounded_decoding").format(
        skills=", ".join(s.signature() for s in context.skills), instruction=context.instruction,
        objects=", ".join(sorted(context.graph.objects)) or "(none)", history=", ".join(done) or "(nothing)")
