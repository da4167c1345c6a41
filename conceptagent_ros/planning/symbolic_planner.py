"""Classical planning over the robot's belief with Fast Downward (the `up-fast-downward` wheel).

Used by the offline backend (no LLM) to propose actions. Objects the robot has not seen do not
exist for the planner. Navigation is modelled as in config/planner_model.yaml (one robot location,
`near` derived by an axiom) because the exact conditional effects make Fast Downward's translator
ten times slower; unified-planning cannot read axioms, so this module calls Fast Downward's driver
on PDDL text directly and reads its plan file.
"""
from __future__ import annotations

import logging
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.paths import config_dir
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.scene.model import distance
from conceptagent_ros.scene.symbolic import SymbolicState, atom_text
from conceptagent_ros.skills.contract import SkillCall

log = logging.getLogger(__name__)
SEARCH = "eager_wastar([ff()], w=2)"  # weighted A*: the shortest plans of the searches tried, at ~1 s


@dataclass(frozen=True)
class PlanResult:
    plan: list[SkillCall] | None  # None: unsolvable, timed out or failed
    status: str  # solved | unsolvable | timeout | error: ...
    seconds: float


@lru_cache(maxsize=1)
def load_planner_model() -> dict[str, Any]:
    path = config_dir() / "planner_model.yaml"
    try:
        return dict(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: {e}") from e


@lru_cache(maxsize=1)
def fast_downward_driver() -> Path:
    try:
        import up_fast_downward
    except ImportError as e:  # pragma: no cover - a hard dependency, but say what to do
        raise ConfigError("the offline planner needs Fast Downward: pip install up-fast-downward") from e
    driver = Path(up_fast_downward.__file__).parent / "downward" / "fast-downward.py"
    if not driver.is_file():
        raise ConfigError(f"Fast Downward's driver is missing at {driver}; reinstall up-fast-downward")
    return driver


def planning_domain_text(domain: PDDLDomain) -> str:
    model = load_planner_model()
    lines = [f"(define (domain {domain.name}-planning)", " (:requirements " + " ".join(model["requirements"]) + ")"]
    if domain.types:
        lines.append(" (:types " + " ".join(domain.types) + " - object)")
    lines.append(" (:predicates")
    for p in domain.predicates:
        lines.append("  (" + " ".join([p.name] + [f"?{a} - object" for a in p.params]) + ")")
    lines.extend("  " + p for p in model["predicates"])
    lines.append(" )")
    lines.extend(" " + " ".join(d.split()) for d in model["derived"])
    for s in domain.skills:
        override = model["actions"].get(s.name)
        if override:
            params, pre, eff = override["parameters"], override["precondition"], override["effect"]
        else:
            params = "(" + " ".join(f"?{p.name} - object" for p in s.params) + ")"
            pre, eff = domain.precondition_text[s.name], s.effect
        lines.append(f" (:action {s.name} :parameters {params}\n  :precondition {' '.join(pre.split())}\n"
                     f"  :effect {' '.join(eff.split())})")
    lines.append(")")
    return "\n".join(lines)


def run_fast_downward(domain_text: str, problem_text: str, timeout: float, search: str = SEARCH,
                      env: dict[str, str] | None = None) -> tuple[str, list[str] | None]:
    """Fast Downward's driver in a folder of its own (it writes its intermediate file to the working
    directory, so two runs sharing one would read each other's): ("solved", the plan's lines), or
    (timeout | unsolvable | error: ..., None)."""
    with tempfile.TemporaryDirectory(prefix="conceptagent-fd-") as tmp:
        folder = Path(tmp)
        (folder / "domain.pddl").write_text(domain_text)
        (folder / "problem.pddl").write_text(problem_text)
        command = [sys.executable, str(fast_downward_driver()), "--plan-file", "plan",
                   "domain.pddl", "problem.pddl", "--search", search]
        try:
            run = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return "timeout", None
        plan_file = folder / "plan"
        if run.returncode in (10, 11, 12):  # translator/search proved it unsolvable
            return "unsolvable", None
        if not plan_file.is_file():
            tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
            return f"error: Fast Downward exited {run.returncode}: {' | '.join(tail)}", None
        return "solved", [line for line in plan_file.read_text().splitlines() if line.startswith("(")]


class SymbolicPlanner:
    def __init__(self, domain: PDDLDomain, timeout: float = 30.0, search: str = SEARCH):
        self.domain = domain
        self.timeout = timeout
        self.search = search
        self.domain_text = planning_domain_text(domain)
        model = load_planner_model()
        self.tool_affordances = tuple(model.get("tool_affordances", ()))
        self.call_args = {name: spec.get("call_args") for name, spec in model["actions"].items()}
        self.calls = 0
        self.seconds = 0.0

    def relevant_objects(self, state: SymbolicState, must_keep: Iterable[str], goal_types: Iterable[str]) -> set[str]:
        """Leave out carryable objects that neither the goal nor any tool role needs."""
        keep = set(must_keep)
        goal_types = set(goal_types)
        for obj, typ in state.types.items():
            carryable = ("pickupable", obj) in state.atoms
            if (not carryable or typ in goal_types or ("holding", obj) in state.atoms
                    or any((a, obj) in state.atoms for a in self.tool_affordances)):
                keep.add(obj)
        return keep

    def problem_text(self, state: SymbolicState, goal: str, robot_at: str, keep: set[str]) -> str:
        objects = " ".join(
            f"{o} - {t if t in self.domain.types else 'object'}" for o, t in sorted(state.types.items()) if o in keep
        )
        atoms = sorted(a for a in state.atoms if a[0] != "near" and all(x in keep for x in a[1:]))
        init = " ".join([f"(robot_at {robot_at})"] + [atom_text(a) for a in atoms])
        return (f"(define (problem task) (:domain {self.domain.name}-planning)\n (:objects {objects})\n (:init {init})\n"
                f" (:goal {goal}))")

    def plan(self, state: SymbolicState, goal: str, robot_at: str, keep: set[str]) -> PlanResult:
        start = time.perf_counter()
        self.calls += 1
        keep = set(keep) | {robot_at}
        status, lines = run_fast_downward(self.domain_text, self.problem_text(state, goal, robot_at, keep),
                                          self.timeout, self.search)
        if lines is None:
            return self._done(None, status, start)
        return self._done([self._to_call(line) for line in lines], "solved", start)

    def _to_call(self, line: str) -> SkillCall:
        name, *args = line.strip("() \n").split()
        chosen = self.call_args.get(name)
        if chosen:
            params = self.domain.parsed[name].params if name in self.domain.parsed else ()
            planner_params = ["from", *params]  # the model's extra ?from comes first
            args = [args[planner_params.index(p)] for p in chosen]
        return SkillCall(name, tuple(args))

    def _done(self, plan: list[SkillCall] | None, status: str, start: float) -> PlanResult:
        seconds = time.perf_counter() - start
        self.seconds += seconds
        log.debug("Fast Downward: %s in %.2f s", status, seconds)
        return PlanResult(plan, status, seconds)


def robot_location(state: SymbolicState, positions: dict[str, tuple[float, float, float]],
                   robot_position: tuple[float, float, float], room: str) -> str:
    """The object the robot stands at, for the planner's `robot_at`: the closest one within reach."""
    near = [o for o in state.types if ("near", o) in state.atoms and ("holding", o) not in state.atoms and o in positions]
    if not near:
        return room
    return min(near, key=lambda o: distance(robot_position, positions[o]))
