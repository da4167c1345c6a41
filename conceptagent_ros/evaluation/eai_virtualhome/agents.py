"""Who decides the next action on a benchmark task: Fast Downward (offline), the oracle with seeded
errors (simulated), or a chat model (openai), all behind one Protocol and all grounded the same way:
an action the world refuses comes back with its unsatisfied preconditions as feedback.

Offline: Fast Downward on the task's PDDL problem (written by unified-planning), from the world's
current state. Action goals (an ordered list of actions that must be done, e.g. TYPE then SWITCHOFF)
are not PDDL goals in the benchmark's files; they are compiled in with one stage fact per goal: an
action of goal k, done while in stage k, moves to stage k+1, and the plan must end in the last stage.

Simulated: the offline plan, with the error kinds of the household simulator (planning/oracles/
simulated.py) that mean the same thing here, at the rates of the `--llm simulated:...` profile:
`hallucination` (an object this home does not have), `infeasible` (an action whose preconditions
fail now), `order` (the plan's second step first), `premature_done`, `loop` (the step before last
again), `repeat_explained` (a refused action tried again though the feedback said why).
"""
from __future__ import annotations

import os
import random
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import unified_planning.model as up_model
from unified_planning.io import PDDLWriter
from unified_planning.shortcuts import BoolType

from conceptagent_ros.evaluation.eai_virtualhome.judge import action_goals_met, script_name
from conceptagent_ros.evaluation.eai_virtualhome.world import ActionCall, ActionOutcome, EAIWorld
from conceptagent_ros.llm.base import ChatMessage, ChatModel
from conceptagent_ros.llm.spec import ErrorRates
from conceptagent_ros.planning.proposal import TokenUsage
from conceptagent_ros.planning.symbolic_planner import run_fast_downward

Fact = tuple[str, tuple[str, ...]]  # ("on", ("computer",))


@dataclass(frozen=True)
class Turn:
    call: ActionCall | None  # None: the reply could not be read as an action
    outcome: ActionOutcome


@dataclass(frozen=True)
class Decision:
    call: ActionCall | None  # None: done
    raw: str = ""
    error: str = ""  # a reply that is no action (fed back, counted as malformed)


@dataclass
class Usage(TokenUsage):
    """The model's calls and tokens (TokenUsage), and the symbolic planner's own work."""

    plans: int = 0
    plan_seconds: float = 0.0


class Proposer(Protocol):
    usage: Usage

    def propose(self, world: EAIWorld, history: Sequence[Turn]) -> Decision: ...


# -- offline: Fast Downward ------------------------------------------------------------------------
@dataclass(frozen=True)
class PlanResult:
    plan: list[ActionCall] | None
    status: str  # solved | unsolvable | timeout | error: ...


TYPE_GUARDS = {"object": "eai_is_object", "character": "eai_is_character"}


def add_type_guards(problem: up_model.Problem) -> None:
    """A static fact per type, required of every parameter of that type. unified-planning writes the
    domain's type `object` as PDDL's root type, of which `character` is then a subtype: Fast Downward
    would try the character as an object argument, and the plan would not convert back. The planners'
    own state (adapter.py) types objects by class and quantifies `object` over everything, so there
    too the guard is what keeps the character out of an object's place."""
    em = problem.environment.expression_manager
    guards = {}
    for type_name, fluent_name in TYPE_GUARDS.items():
        user_type = problem.user_type(type_name)
        guard = up_model.Fluent(fluent_name, BoolType(), item=user_type)
        problem.add_fluent(guard, default_initial_value=False)
        for obj in problem.all_objects:
            if obj.type == user_type:
                problem.set_initial_value(em.FluentExp(guard, [em.ObjectExp(obj)]), True)
        guards[type_name] = guard
    for action in problem.actions:
        for parameter in action.parameters:
            guard = guards.get(parameter.type.name)  # type: ignore[attr-defined]
            if guard is not None:
                action.add_precondition(em.FluentExp(guard, [em.ParameterExp(parameter)]))  # type: ignore[attr-defined]


def stage_name(k: int) -> str:
    return f"eai_stage_{k}"


def add_stages(problem: up_model.Problem, action_goals: Sequence[tuple[str, ...]]) -> list[up_model.Fluent]:
    """Action goals as facts: stage k becomes stage k+1 when an action of goal k is done in it. The
    stage fluents, first to last (none without action goals); the caller sets the start and the goal."""
    if not action_goals:
        return []
    em = problem.environment.expression_manager
    stages = [up_model.Fluent(stage_name(k), BoolType()) for k in range(len(action_goals) + 1)]
    for stage in stages:
        problem.add_fluent(stage, default_initial_value=False)
    for action in problem.actions:
        for k, alternatives in enumerate(action_goals):
            if script_name(action.name) in alternatives:
                now, then = em.FluentExp(stages[k]), em.FluentExp(stages[k + 1])
                action.add_effect(then, True, condition=now)  # type: ignore[attr-defined]
                action.add_effect(now, False, condition=now)  # type: ignore[attr-defined]
    return stages


def planning_problem(world: EAIWorld, facts: Sequence[Fact] | None = None,
                     action_goals: Sequence[tuple[str, ...]] | None = None) -> up_model.Problem:
    """The task from the world's current state, with the action goals not yet done as stage facts.
    `facts` and `action_goals` replace the task's goals (to ask whether one part alone is reachable)."""
    problem = world.problem.clone()
    em = problem.environment.expression_manager
    for fluent_exp in world.problem.initial_values:
        problem.set_initial_value(fluent_exp, world.state.get_value(fluent_exp))
    if facts is not None:
        problem.clear_goals()
        for predicate, args in facts:
            problem.add_goal(em.FluentExp(problem.fluent(predicate), [problem.object(a) for a in args]))
    if action_goals is not None:
        remaining = tuple(action_goals)
    else:
        done = action_goals_met(world.task.action_goals, [c.action for c in world.executed])
        remaining = world.task.action_goals[done:]
    add_type_guards(problem)
    stages = add_stages(problem, remaining)
    if stages:
        problem.set_initial_value(em.FluentExp(stages[0]), True)
        problem.add_goal(em.FluentExp(stages[-1]))
    return problem


def fast_downward_plan(world: EAIWorld, timeout: float = 60.0, facts: Sequence[Fact] | None = None,
                      action_goals: Sequence[tuple[str, ...]] | None = None) -> PlanResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `open` is a predicate and an action: allowed in this environment
        try:
            problem = planning_problem(world, facts, action_goals)
        except Exception as e:  # noqa: BLE001 - a fact over a predicate or object this task lacks
            return PlanResult(None, f"error: {e}")
    return solve(problem, timeout)


def solve(problem: up_model.Problem, timeout: float = 60.0) -> PlanResult:
    """Fast Downward on a task problem (changed in place: the actions without effects are left out,
    which Fast Downward refuses; the domain's find, wake_up, ... matter only as action goals)."""
    keep = [a for a in problem.actions if a.effects]  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `open` is a predicate and an action: allowed in this environment
        problem.clear_actions()
        for action in keep:
            problem.add_action(action)
        try:
            writer = PDDLWriter(problem)
            domain_text, problem_text = writer.get_domain(), writer.get_problem()
        except Exception as e:  # noqa: BLE001
            return PlanResult(None, f"error: {e}")
    # A fixed hash seed: the translator's set order, and so the plan, is the same on every run.
    status, plan_lines = run_fast_downward(domain_text, problem_text, timeout, env={**os.environ, "PYTHONHASHSEED": "0"})
    if plan_lines is None:
        return PlanResult(None, status)
    lines = [line.strip("() \n").split() for line in plan_lines]
    calls = [ActionCall(writer.get_item_named(name).name, tuple(writer.get_item_named(a).name for a in args))
             for name, *args in lines]
    return PlanResult(calls, "solved")


class OfflineProposer:
    """Plans once, follows the plan, plans again after anything it did not expect."""

    def __init__(self, timeout: float = 60.0):
        self.timeout = timeout
        self.usage = Usage()
        self.plan: list[ActionCall] = []
        self.last_status = ""

    def propose(self, world: EAIWorld, history: Sequence[Turn]) -> Decision:
        last = history[-1] if history else None
        if last is not None and self.plan and last.call == self.plan[0] and last.outcome.success:
            self.plan.pop(0)
        elif last is not None:
            self.plan = []  # an action it did not plan, or a refusal: plan again from here
        if not self.plan and not self._goal_reached(world):
            start = time.perf_counter()
            result = fast_downward_plan(world, self.timeout)
            self.usage.plans += 1
            self.usage.plan_seconds += time.perf_counter() - start
            self.last_status = result.status
            if result.plan is None:
                return Decision(None, raw=f"no plan: {result.status}")
            self.plan = list(result.plan)
        if not self.plan:
            return Decision(None, raw="the goal holds")
        return Decision(self.plan[0], raw=" -> ".join(map(str, self.plan)))

    @staticmethod
    def _goal_reached(world: EAIWorld) -> bool:
        if action_goals_met(world.task.action_goals, [c.action for c in world.executed]) < len(world.task.action_goals):
            return False
        return bool(world.simulator.is_goal(world.state))


# -- simulated: the oracle with seeded errors ------------------------------------------------------
@dataclass
class SimulatedProposer:
    rates: ErrorRates
    seed: int
    task_id: str
    foreign_objects: Sequence[str]  # class names of the benchmark that this home does not have
    oracle: OfflineProposer = field(default_factory=OfflineProposer)
    usage: Usage = field(default_factory=Usage)
    errors: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"eai:{self.seed}:{self.task_id}")
        self.usage = self.oracle.usage

    def _chance(self, rate: float) -> bool:
        return rate > 0 and self.rng.random() < rate

    def _made(self, kind: str, call: ActionCall | None, raw: str) -> Decision:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        return Decision(call, raw=f"[{kind}] {raw}")

    def propose(self, world: EAIWorld, history: Sequence[Turn]) -> Decision:
        last = history[-1] if history else None
        if last is not None and last.call is not None and not last.outcome.success and self._chance(self.rates.repeat_explained):
            return self._made("repeat_explained", last.call, "tried again")
        right = self.oracle.propose(world, history)
        self.usage.calls += 1
        if right.call is None:
            return right
        if self._chance(self.rates.premature_done):
            return self._made("premature_done", None, "believed done")
        executed = [t.call for t in history if t.call is not None and t.outcome.success]
        if len(executed) >= 2 and self._chance(self.rates.loop):
            return self._made("loop", executed[-2], "back to the step before")
        if self.foreign_objects and right.call.args and self._chance(self.rates.hallucination):
            args = list(right.call.args)
            args[-1] = self.rng.choice(list(self.foreign_objects))
            return self._made("hallucination", ActionCall(right.call.action, tuple(args)), "an object not here")
        if self._chance(self.rates.infeasible):
            wrong = self._infeasible(world)
            if wrong is not None:
                return self._made("infeasible", wrong, "an action that cannot run now")
        if len(self.oracle.plan) >= 2 and self._chance(self.rates.order):
            return self._made("order", self.oracle.plan[1], "a later step first")
        return right

    def _infeasible(self, world: EAIWorld) -> ActionCall | None:
        objects = [o for o in world.objects if o != "character"]
        actions = sorted(world.actions.items())
        for _ in range(20):
            name, params = self.rng.choice(actions)
            args = tuple("character" if t == "character" else self.rng.choice(objects) for _, t in params)
            event_world_ok = _applicable(world, ActionCall(name, args))
            if event_world_ok is False:
                return ActionCall(name, args)
        return None


def _applicable(world: EAIWorld, call: ActionCall) -> bool | None:
    action = world.problem.action(call.action)
    try:
        objects = [world.problem.object(a) for a in call.args]
        return bool(world.simulator.is_applicable(world.state, action, objects))
    except Exception:  # noqa: BLE001 - an ill-typed draw: not a useful error to make
        return None


# -- a chat model ----------------------------------------------------------------------------------
SYSTEM_PROMPT = """You control a character in a home. Each turn, answer with exactly one action, written as
the action's name followed by its arguments, e.g. `walk_towards character fridge`, or `done` when the task is
complete. Use only the actions and objects listed. If an action is refused, the reply says which of its
preconditions did not hold: fix that first."""


class ChatProposer:
    """A ReAct-style loop: the task, the actions, the objects and what has happened so far, one action
    per reply."""

    def __init__(self, model: ChatModel, max_tokens: int = 64):
        self.model = model
        self.max_tokens = max_tokens
        self.usage = Usage()

    def prompt(self, world: EAIWorld, history: Sequence[Turn]) -> list[ChatMessage]:
        actions = "\n".join(f"- {name} {' '.join(f'<{p}:{t}>' for p, t in params)}"
                            for name, params in sorted(world.actions.items()))
        lines = [f"Task: {world.task.task_name}. {world.task.instruction}", "", "Actions:", actions, "",
                 "Objects: " + ", ".join(world.objects), ""]
        if history:
            lines.append("So far:")
            lines.extend(f"{i}. {t.call if t.call else '(unreadable)'}: {t.outcome.message}"
                         for i, t in enumerate(history, 1))
        lines.append("Next action:")
        return [ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", "\n".join(lines))]

    def propose(self, world: EAIWorld, history: Sequence[Turn]) -> Decision:
        reply = self.model.complete(self.prompt(world, history), max_tokens=self.max_tokens)
        self.usage.add(reply.prompt_tokens, reply.completion_tokens, reply.seconds)
        text = reply.text.strip().strip("`").strip()
        first = text.splitlines()[0].strip().strip("`") if text else ""
        try:
            call = ActionCall.parse(first)
        except ValueError:
            return Decision(None, raw=reply.text, error="the reply names no action")
        return Decision(None if call.action == "done" else call, raw=reply.text)
