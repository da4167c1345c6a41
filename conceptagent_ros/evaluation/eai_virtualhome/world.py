"""A task of the benchmark as a world: its objects and initial facts under the VirtualHome domain's
33 actions, stepped by unified-planning's sequential simulator.

The domain's preconditions decide whether an action runs; its effects (ADL: `forall`, `when`) say
what changes. A refused action changes nothing and says which precondition failed, the feedback a
grounded planner gets. Loading is lenient where the benchmark's files are not strictly typed
(data/README.md): an initial fact that breaks the domain's typing, e.g. `(facing couch television)`
where `facing` takes a character, is left out and listed in `dropped_facts`; no action of the domain
could read such a fact, since every action's character parameter is the character.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import unified_planning.model as up_model
from pddl import parse_problem as parse_pddl_problem
from pddl.core import Problem as PDDLProblem
from pddl.formatter import problem_to_string
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
    kept, dropped = [], []
    for atom in parsed.init:
        name = str(getattr(atom, "name", ""))
        try:
            fluent = scratch.fluent(name)
            args = [scratch.object(str(t.name)) for t in atom.terms]  # type: ignore[attr-defined]
            scratch.set_initial_value(em.FluentExp(fluent, args), True)
            kept.append(atom)
        except Exception:  # noqa: BLE001 - unified-planning's type errors: the fact is ill-typed here
            dropped.append(str(atom))
    filtered = PDDLProblem(str(parsed.name), domain_name=str(parsed.domain_name), requirements=parsed.requirements,
                           objects=parsed.objects, init=kept, goal=parsed.goal)
    return filtered, tuple(sorted(dropped))


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
