"""A task of the benchmark as a world: its objects and initial facts under the VirtualHome domain's
33 actions, stepped by unified-planning's sequential simulator.

The domain's preconditions decide whether an action runs; its effects (ADL: `forall`, `when`) say
what changes. A refused action changes nothing and says which precondition failed, the feedback a
grounded planner gets. Loading is lenient where the benchmark's files are not strictly typed
(data/README.md): an initial fact that breaks the domain's typing, e.g. `(facing couch television)`
where `facing` takes a character, is left out and listed in `dropped_facts`; no action of the domain
could read such a fact, since every action's character parameter is the character. An ill-typed fact
of the PDDL goal is left out the same way (listed as `goal: ...`): the benchmark scores a task from
its JSON goals, not from the PDDL one.
"""
from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import unified_planning.model as up_model
from pddl import parse_problem as parse_pddl_problem
from pddl.core import Problem as PDDLProblem
from pddl.formatter import problem_to_string
from pddl.logic.base import And, Not, Or
from pddl.logic.predicates import Predicate
from unified_planning.engines.sequential_simulator import UPSequentialSimulator
from unified_planning.exceptions import UPInvalidActionError
from unified_planning.io import PDDLReader

from conceptagent_ros.evaluation.eai_virtualhome.task_files import EAIDataError, EAITask, domain_path
from conceptagent_ros.planning.pddl.domain import new_environment


@dataclass(frozen=True)
class ActionOutcome:
    success: bool
    message: str
    unsatisfied: tuple[str, ...] = ()  # the failed preconditions, as PDDL-like text


@dataclass(frozen=True)
class ActionCall:
    action: str
    args: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> ActionCall:
        """`grab character pot`, `grab(character, pot)`, `(grab character pot)` or `Action: grab ...`."""
        text = re.sub(r"^\s*(?:next\s+)?action\s*:\s*", "", text, flags=re.IGNORECASE)
        words = re.findall(r"[A-Za-z0-9_]+", text)
        if not words:
            raise ValueError("an empty action")
        return cls(words[0].lower(), tuple(w.lower() for w in words[1:]))

    def __str__(self) -> str:
        return f"{self.action}({', '.join(self.args)})"


@lru_cache(maxsize=4)
def domain_problem(path: Path) -> up_model.Problem:
    """The domain alone (no objects), parsed once per file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `open` is both a predicate and an action: expected here
            return PDDLReader(new_environment()).parse_problem(str(path))
    except Exception as e:  # unified-planning raises several error types for a bad file
        raise EAIDataError(f"{path}: the VirtualHome domain does not parse: {e}") from e


def _well_typed(domain: up_model.Problem, parsed: PDDLProblem) -> tuple[PDDLProblem, tuple[str, ...]]:
    """The problem without the initial facts the domain's typing rejects, and those facts."""
    scratch = domain.clone()
    em = scratch.environment.expression_manager
    types = {t.name: t for t in scratch.user_types}
    for constant in parsed.objects:
        tags = sorted(constant.type_tags) or ["object"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the object `character` of type `character`: allowed here
            scratch.add_object(up_model.Object(str(constant.name), types.get(str(tags[0])) or types["object"]))
    def well_typed(atom: Any) -> bool:
        try:
            fluent = scratch.fluent(str(getattr(atom, "name", "")))
            args = [scratch.object(str(t.name)) for t in atom.terms]
            # setting it on the throwaway copy is what checks the arguments' types (building the
            # expression alone does not)
            scratch.set_initial_value(em.FluentExp(fluent, args), True)
            return True
        except Exception:  # noqa: BLE001 - unified-planning's type errors: the fact is ill-typed here
            return False

    kept: list[Any] = []
    dropped: list[Any] = []
    for atom in parsed.init:
        (kept if well_typed(atom) else dropped).append(atom)
    goal, dropped_goal = _well_typed_goal(parsed.goal, well_typed)
    if goal is None:  # every fact of the goal was ill typed: an empty goal, as some tasks' files have
        goal = And()
    filtered = PDDLProblem(str(parsed.name), domain_name=str(parsed.domain_name), requirements=parsed.requirements,
                           objects=parsed.objects, init=kept, goal=goal)
    return filtered, tuple(sorted([str(a) for a in dropped] + [f"goal: {a}" for a in dropped_goal]))


def _well_typed_goal(formula: Any, well_typed: Callable[[Any], bool]) -> tuple[Any, list[str]]:
    """The goal without its ill-typed facts (a conjunct, a disjunct or a negated fact goes with its
    fact), and those facts; None when nothing is left. Quantified parts are kept as they are."""
    if isinstance(formula, Predicate):
        return (formula, []) if well_typed(formula) else (None, [str(formula)])
    if isinstance(formula, Not):
        inner, dropped = _well_typed_goal(formula.argument, well_typed)
        return (Not(inner) if inner is not None else None), dropped
    if isinstance(formula, (And, Or)):
        parts = [_well_typed_goal(op, well_typed) for op in formula.operands]
        kept = [f for f, _ in parts if f is not None]
        dropped = [d for _, ds in parts for d in ds]
        if not dropped:
            return formula, []  # untouched (an empty `(and)` included)
        if not kept:
            return None, dropped
        return (kept[0] if len(kept) == 1 else type(formula)(*kept)), dropped
    return formula, []


@lru_cache(maxsize=256)
def task_problem(problem_path: Path, domain_file: Path) -> tuple[up_model.Problem, tuple[str, ...]]:
    """The task's PDDL problem under the domain (lenient about ill-typed facts), and the facts left out."""
    domain = domain_problem(domain_file)
    try:
        parsed = parse_pddl_problem(str(problem_path))
    except Exception as e:  # the pddl package raises lark and its own errors
        raise EAIDataError(f"{problem_path}: the PDDL problem does not parse: {e}") from e
    filtered, dropped = _well_typed(domain, parsed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            problem = PDDLReader(new_environment()).parse_problem_string(
                domain_file.read_text(encoding="utf-8"), problem_to_string(filtered))
    except Exception as e:  # noqa: BLE001
        raise EAIDataError(f"{problem_path}: the problem does not load under the domain: {e}") from e
    return problem, dropped


class EAIWorld:
    """One episode's world. `execute` is the only way to change it."""

    def __init__(self, task: EAITask, root: Path):
        if task.problem is None:
            raise EAIDataError(f"task {task.id} has no PDDL problem in the benchmark data")
        self.task = task
        self.problem, self.dropped_facts = task_problem(task.problem, domain_path(root))
        self.simulator = UPSequentialSimulator(self.problem)
        self.state = self.simulator.get_initial_state()
        self.executed: list[ActionCall] = []
        self._em = self.problem.environment.expression_manager

    @property
    def objects(self) -> tuple[str, ...]:
        return tuple(sorted(o.name for o in self.problem.all_objects))

    @property
    def actions(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """Action name -> its parameters as (name, type)."""
        return {a.name: tuple((p.name, p.type.name) for p in a.parameters)  # type: ignore[attr-defined]
                for a in self.problem.actions}

    def execute(self, call: ActionCall) -> ActionOutcome:
        if not self.problem.has_action(call.action):
            return ActionOutcome(False, f"{call}: there is no action '{call.action}'; actions: "
                                        f"{', '.join(sorted(self.actions))}")
        action = self.problem.action(call.action)
        if len(call.args) != len(action.parameters):
            wanted = ", ".join(p.name for p in action.parameters)
            return ActionOutcome(False, f"{call}: {call.action} takes {len(action.parameters)} arguments ({wanted})")
        missing = [a for a in call.args if not self.problem.has_object(a)]
        if missing:
            return ActionOutcome(False, f"{call}: no object {', '.join(repr(m) for m in missing)} in this home")
        objects = [self.problem.object(a) for a in call.args]
        wrong = [f"{o.name} is not a {p.type}" for o, p in zip(objects, action.parameters)
                 if not p.type.is_compatible(o.type)]
        if wrong:
            return ActionOutcome(False, f"{call}: {'; '.join(wrong)}")
        try:
            conditions, reason = self.simulator.get_unsatisfied_conditions(self.state, action, objects)
        except UPInvalidActionError:  # grounding simplified the precondition to false: it never holds here
            false = self._false_atoms(action, call.args)
            why = "; ".join(false) if false else "its preconditions can never hold for these objects"
            return ActionOutcome(False, f"{call} not executed: unsatisfied {why}", tuple(false) or (why,))
        unsatisfied = tuple(str(c) for c in conditions)
        if unsatisfied or reason is not None:
            why = "; ".join(unsatisfied) or str(reason)
            return ActionOutcome(False, f"{call} not executed: unsatisfied {why}", unsatisfied or (why,))
        after = self.simulator.apply(self.state, action, objects)
        if after is None:  # conflicting effects: the simulator refuses the step
            return ActionOutcome(False, f"{call} not executed: its effects conflict in this state")
        self.state = after
        self.executed.append(call)
        return ActionOutcome(True, f"{call} done")

    def _false_atoms(self, action: up_model.Action, args: tuple[str, ...]) -> list[str]:
        """The action's top-level atomic preconditions that are false for these arguments, e.g.
        `grabbable(bed)`: what a refusal can name when the whole precondition folds to false."""
        binding = {p.name: a for p, a in zip(action.parameters, args)}
        false = []
        for condition in action.preconditions:  # type: ignore[attr-defined]
            atoms = condition.args if condition.is_and() else [condition]
            for atom in atoms:
                if atom.is_fluent_exp() and all(a.is_parameter_exp() for a in atom.args):
                    ground = tuple(binding[a.parameter().name] for a in atom.args)
                    if not self.holds(atom.fluent().name, ground):
                        false.append(f"{atom.fluent().name}({', '.join(ground)})")
        return false

    def holds(self, predicate: str, args: tuple[str, ...]) -> bool:
        """Whether a fact is true now; false for a predicate or object this task does not have."""
        if not self.problem.has_fluent(predicate) or not all(self.problem.has_object(a) for a in args):
            return False
        fluent = self.problem.fluent(predicate)
        if fluent.arity != len(args):
            return False
        try:
            value = self.state.get_value(self._em.FluentExp(fluent, [self.problem.object(a) for a in args]))
        except Exception:  # noqa: BLE001 - an ill-typed query is simply not a true fact
            return False
        return bool(value.bool_constant_value())
