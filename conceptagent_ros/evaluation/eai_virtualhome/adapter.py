"""An EAI task behind the planners' interface: every planner of the stack (planning/planners/) runs the
benchmark's worlds through the household's own agent loop (planning/agent.py), with its precondition
check, its `done` check and its feedback, unchanged.

What each piece of the household stack becomes here:
- the PDDL domain: the benchmark's own, read by unified-planning (world.py), with two additions the
  planners need to read it as the world does: a static guard per parameter type (the character is no
  object) and, for action goals (an ordered list of actions to do, which are not facts), stage facts
  that the goal's actions advance (agents.py, shared with the Fast Downward reference);
- the skills: the domain's 33 actions, and `done`;
- the belief: the world's facts, read from unified-planning's simulator state after every action
  (objects are typed by their class, which is their name: the benchmark's problems hold one object
  per class), and the stage the action goals have reached;
- the robot: the world; an action its preconditions refuse changes nothing and comes back naming
  them, the world's `precondition` failure;
- the simulated model's oracle: Fast Downward on the adapted problem from the state the model is
  asked about (so a wrong belief, planned on, gives a wrong plan), its plan followed while the states
  it predicts come true.

The judge is the benchmark's (judge.py): the task's JSON goals against the world's facts, which shares
nothing with the planners' goal, verifier or effect model.
"""
from __future__ import annotations

import re
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import unified_planning.model as up_model

from conceptagent_ros.evaluation.eai_virtualhome.agents import (
    TYPE_GUARDS,
    add_stages,
    add_type_guards,
    solve,
    stage_name,
)
from conceptagent_ros.evaluation.eai_virtualhome.judge import CHARACTER, action_goals_met
from conceptagent_ros.evaluation.eai_virtualhome.task_files import EAITask
from conceptagent_ros.evaluation.eai_virtualhome.world import ActionCall, EAIWorld
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.oracles.simulated import WorldWords
from conceptagent_ros.planning.pddl.domain import ParsedSkill, PDDLDomain
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.prompts import PlanExample
from conceptagent_ros.planning.proposal import DecisionContext, Proposal, TokenUsage
from conceptagent_ros.scene.model import RobotState
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.symbolic import Atom, SymbolicState
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary, SkillOutcome, SkillParam, SkillSpec

# the domain's names for what the simulated model's wrong beliefs are about
EAI_WORDS = WorldWords(openable="can_open", open="open")
DONE = SkillSpec("done", "the task is complete: the goal holds", (), "(and)", "(and)")


def object_class(name: str) -> str:
    """`character` for the character; else the class, which the benchmark's object names are."""
    return CHARACTER if name == CHARACTER else re.sub(r"_\d+$", "", name)


class EAIDomain(PDDLDomain):
    """The benchmark's domain, as the planners read a PDDL domain: its actions' preconditions and
    effects as unified-planning parsed them (no text of ours: goals are built as formulas)."""

    def __init__(self, problem: up_model.Problem, skills: Sequence[SkillSpec]):  # noqa: D107 - no super(): no text
        self.predicates = ()
        self.skills = [s for s in skills if s.name != "done"]
        self.types = sorted({object_class(o.name) for o in problem.all_objects})
        self.precondition_text = {}
        self.name = "virtualhome"
        self.text = ""
        self.env = problem.environment
        self.problem = problem
        em = self.env.expression_manager
        self.parsed = {}
        for action in problem.actions:
            conditions = list(action.preconditions)  # type: ignore[attr-defined]
            formula = em.And(conditions) if conditions else em.TRUE()
            self.parsed[action.name] = ParsedSkill(action.name, tuple(p.name for p in action.parameters), formula,
                                                   action)  # type: ignore[arg-type]

    def parse_goal(self, goal: str, types: Mapping[str, str]) -> up_model.FNode:
        raise NotImplementedError("goals over the benchmark's domain are built as formulas (adapter.task_goal)")


@dataclass
class EAIPlanningModel:
    """The task as the planners see it: domain, skills, goal; and how to read the world's state."""

    world: EAIWorld
    problem: up_model.Problem  # the task's problem with type guards and stage facts
    domain: EAIDomain
    skills: SkillLibrary
    goal: Goal
    static: frozenset[Atom]  # the guards: true throughout

    @classmethod
    def of(cls, world: EAIWorld) -> EAIPlanningModel:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `open` is a predicate and an action: allowed in this environment
            problem = world.problem.clone()
            add_type_guards(problem)
            stages = add_stages(problem, world.task.action_goals)
            em = problem.environment.expression_manager
            if stages:
                problem.add_goal(em.FluentExp(stages[-1]))
        skills = [SkillSpec(a.name, f"the benchmark's action {a.name}",
                            tuple(SkillParam(p.name, p.type.name) for p in a.parameters),  # type: ignore[attr-defined]
                            "(see the domain)", "(see the domain)")
                  for a in problem.actions]
        domain = EAIDomain(problem, skills)
        goals = list(problem.goals)
        goal = Goal.of_formula(em.And(goals) if goals else em.TRUE())
        static = frozenset((TYPE_GUARDS[o.type.name], o.name) for o in problem.all_objects
                           if o.type.name in TYPE_GUARDS)
        return cls(world, problem, domain, SkillLibrary([*skills, DONE]), goal, static)

    def state(self) -> SymbolicState:
        """The world's facts now, the guards, and the stage the action goals have reached."""
        world = self.world
        atoms = set(self.static)
        for fluent_exp in world.problem.initial_values:
            if world.state.get_value(fluent_exp).bool_constant_value():
                atoms.add((fluent_exp.fluent().name, *(a.object().name for a in fluent_exp.args)))
        if world.task.action_goals:
            atoms.add((stage_name(action_goals_met(world.task.action_goals, [c.action for c in world.executed])),))
        return SymbolicState(frozenset(atoms), {o: object_class(o) for o in world.objects})


@dataclass(frozen=True)
class EAIThing:
    id: str
    category: str


class EAIBelief:
    """What the agent believes: the world's facts (the benchmark's tasks are fully observed)."""

    def __init__(self, model: EAIPlanningModel):
        self.model = model
        self.objects = {o: EAIThing(o, object_class(o)) for o in model.world.objects}
        self._changing = {e.fluent.fluent().name for a in model.problem.actions
                          for e in a.effects}  # type: ignore[attr-defined]

    def integrate(self, observation: Any, step: int = 0) -> list[str]:
        return []  # nothing is hidden: every object is known from the start

    def symbolic_state(self) -> SymbolicState:
        return self.model.state()

    def unvisited_rooms(self) -> list[str]:
        return []  # the benchmark's tasks are fully observed

    def frontier_size(self) -> int:
        return 0

    def near_hint(self, atom: tuple[str, ...], value: bool) -> str | None:
        return None

    def describe(self) -> str:
        """Each object with its properties (facts no action changes) and its state; the character's
        relations; the action goals done so far."""
        state = self.symbolic_state()
        changing = self._changing
        lines = ["Objects (id: properties; state):"]
        for obj in sorted(self.objects):
            if obj == CHARACTER:
                continue
            unary = [p for p, *args in sorted(state.atoms) if args == [obj] and not p.startswith("eai_")]
            props = [p for p in unary if p not in changing]
            now = [p for p in unary if p in changing]
            relations = [f"{p} {args[1]}" for p, *args in sorted(state.atoms) if len(args) == 2 and args[0] == obj]
            lines.append(f"  - {obj}: {', '.join(props) or '-'}; {', '.join(now + relations) or '-'}")
        mine = [" ".join([p, *args[1:]]) for p, *args in sorted(state.atoms) if args[:1] == [CHARACTER]
                and not p.startswith("eai_")]
        lines.append(f"Character: {', '.join(mine) or 'nothing notable'}.")
        goals = self.model.world.task.action_goals
        if goals:
            done = action_goals_met(goals, [c.action for c in self.model.world.executed])
            lines.append(f"Actions the task asks for, in order: {', '.join('|'.join(g) for g in goals)}; done: {done}.")
        return "\n".join(lines)


class EAIRobot:
    """The world as the agent's robot: an action runs, or is refused naming what did not hold."""

    def __init__(self, world: EAIWorld):
        self.world = world

    def observe(self) -> Observation:
        return Observation(RobotState((0.0, 0.0, 0.0), "home"), ())

    def execute(self, call: SkillCall) -> SkillOutcome:
        outcome = self.world.execute(ActionCall(call.skill, call.args))
        if outcome.success:
            return SkillOutcome(call, True, outcome.message)
        return SkillOutcome(call, False, outcome.message, "precondition" if outcome.unsatisfied else "invalid")


@dataclass
class EAIOracle:
    """Fast Downward on the adapted task from the state it is asked about; its plan is followed while
    the states it predicts come true (a cheap check: the plan is made once, not at every decision)."""

    model: EAIPlanningModel
    effects: EffectModel
    timeout: float = 60.0
    usage: TokenUsage = field(default_factory=TokenUsage)
    plans: int = 0
    plan_seconds: float = 0.0
    _plan: list[SkillCall] = field(default_factory=list)
    _states: list[SymbolicState] = field(default_factory=list)  # the state before each step of _plan
    _reaches_goal: bool = False

    def propose(self, context: DecisionContext) -> Proposal:
        state = context.state
        if self.model.goal.holds(state):
            self._plan, self._states, self._reaches_goal = [], [], True
            return Proposal(SkillCall("done"), raw="the goal holds")
        at = next((i for i, s in enumerate(self._states) if s.atoms == state.atoms), None)
        if at is None:
            self._replan(state)
        else:
            self._plan, self._states = self._plan[at:], self._states[at:]
        if not self._plan:
            return Proposal(SkillCall("done"), raw="giving up: no plan reaches the goal from here")
        return Proposal(self._plan[0], raw=" -> ".join(map(str, self._plan)))

    def _replan(self, state: SymbolicState) -> None:
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem = self.model.problem.clone()
            for fluent_exp in self.model.problem.initial_values:
                atom = (fluent_exp.fluent().name, *(a.object().name for a in fluent_exp.args))
                problem.set_initial_value(fluent_exp, atom in state.atoms)
        result = solve(problem, self.timeout)
        self.plans += 1
        self.plan_seconds += time.perf_counter() - started
        self._plan = [SkillCall(c.action, c.args) for c in result.plan or []]
        self._reaches_goal = result.plan is not None
        self._states = []
        for call in self._plan:
            self._states.append(state)
            state = self.effects.apply(call, state)

    @property
    def remaining_plan(self) -> tuple[SkillCall, ...]:
        return tuple(self._plan)

    @property
    def plan_reaches_goal(self) -> bool:
        return self._reaches_goal


def example_bank(tasks: Sequence[EAITask]) -> tuple[PlanExample, ...]:
    """LLM-Planner's in-context examples here: the benchmark's gold plans (the retriever leaves out the
    task's own, by source)."""
    examples = []
    for task in tasks:
        lines = [line.split() for line in task.gold_plan or ()]
        plan = tuple(SkillCall(words[0], tuple(words[1:])) for words in lines if words)
        if plan:
            examples.append(PlanExample(f"{task.task_name}. {task.instruction}", plan, source=task.id))
    return tuple(examples)
