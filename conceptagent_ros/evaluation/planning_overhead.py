"""Planning overhead outside the language model, per decision, on a large scene.

A scene of N objects (a built-in layout plus copies of its small objects, all in view) and a
planner on the simulated backend without errors. The overhead of one decision is its wall time
minus the backend's own time (the oracle stands in for the model), i.e. tree search, precondition
checks, effect prediction and prompt rendering. It is compared with what the decision's LLM calls
would cost at a realistic latency (0.5 s a call by default): the ratio must stay well below 10 %,
and a decision's own work at most MAX_MS_PER_DECISION (MCTS with 20 expansions included). Wall time
on a shared machine is noisy: the decisions are run a few times afresh and each one's fastest run
counts.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from typing import TextIO

from conceptagent_ros.llm.spec import parse_llm_spec
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.planning.planners import PlannerSpec, build_planner
from conceptagent_ros.planning.proposal import DecisionContext, StepRecord
from conceptagent_ros.scene.graph import SceneGraph
from conceptagent_ros.scene.loader import domain_types, load_scene
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.scene.state_text import describe_state
from conceptagent_ros.scene.symbolic import load_predicates
from conceptagent_ros.sim.world import World
from conceptagent_ros.skills.contract import load_skill_library

MAX_MS_PER_DECISION = 25.0


@dataclass
class OverheadResult:
    planner: str
    objects: int
    decisions: int
    llm_calls_per_decision: float
    overhead_ms_per_decision: float
    llm_seconds_per_call: float

    @property
    def ratio(self) -> float:
        """Overhead over the time the decision's LLM calls would take at the assumed latency."""
        budget = self.llm_calls_per_decision * self.llm_seconds_per_call
        return self.overhead_ms_per_decision / 1000 / budget if budget else float("inf")

    @property
    def ratio_one_call(self) -> float:
        """The stricter figure: the whole decision's overhead against a single LLM call."""
        return self.overhead_ms_per_decision / 1000 / self.llm_seconds_per_call

    def line(self) -> str:
        return (f"{self.planner:<22} {self.objects} objects: {self.overhead_ms_per_decision:7.1f} ms overhead per "
                f"decision, {self.llm_calls_per_decision:5.1f} LLM calls per decision; overhead / LLM time "
                f"= {self.ratio:.2%} (against one {self.llm_seconds_per_call:g} s call: {self.ratio_one_call:.1%})")


def crowded_scene(base: str = "studio_kitchen", objects: int = 200) -> Scene:
    """The base layout plus copies of its small objects in the start room, all visible."""
    scene = load_scene(base).copy()
    room = scene.robot.start_room
    bounds = scene.rooms[room].bounds
    small = [o for o in scene.objects.values() if o.has("pickupable")]
    i = 0
    while len(scene.objects) < objects:
        src = small[i % len(small)]
        i += 1
        x = bounds[0] + 0.3 + (i * 0.37) % max(0.1, bounds[2] - bounds[0] - 0.6)
        y = bounds[1] + 0.3 + (i * 0.53) % max(0.1, bounds[3] - bounds[1] - 0.6)
        clone = replace(src, id=f"{src.category}_{100 + i}", room=room, position=(x, y, 0.9), parent=None,
                        hidden=False, state=dict(src.state))
        scene.objects[clone.id] = clone
    scene.name = f"{base}_x{objects}"
    return scene


@dataclass
class _Run:
    calls: list[str]  # the decisions made, in order
    overhead_s: list[float]  # each decision's time outside the backend
    llm_calls: int


def measure(planner: str = "mcts:expansions=20", objects: int = 200, decisions: int = 5,
            llm_seconds_per_call: float = 0.5, instruction: str = "put the apple in the fridge",
            goal_text: str = "(exists (?a - apple ?f - fridge) (in ?a ?f))", stream: TextIO | None = None,
            repeats: int = 3) -> OverheadResult:
    """The episode's first `decisions` decisions, run `repeats` times afresh. The search is seeded, so
    every run makes the same decisions; each decision's overhead is its fastest run (as timeit takes
    the best of its repeats): what the work costs, less what a busy machine added to one run."""
    stream = stream or sys.stderr
    scene = crowded_scene(objects=objects)
    runs = [_run_once(scene, planner, decisions, instruction, goal_text, stream if r == 0 else None)
            for r in range(max(1, repeats))]
    first = runs[0]
    if all(run.calls == first.calls for run in runs):
        per_decision = [min(run.overhead_s[i] for run in runs) for i in range(len(first.calls))]
    else:  # not the same decisions (an unseeded planner): the run with the least overhead, whole
        stream.write("  the runs made different decisions: the fastest run is reported whole\n")
        first = min(runs, key=lambda run: sum(run.overhead_s) / len(run.overhead_s))
        per_decision = first.overhead_s
    made = len(per_decision)
    return OverheadResult(str(PlannerSpec.parse(planner)), len(scene.objects), made, first.llm_calls / made,
                          1000 * sum(per_decision) / made, llm_seconds_per_call)


def _run_once(scene: Scene, planner: str, decisions: int, instruction: str, goal_text: str,
              stream: TextIO | None) -> _Run:
    skills = load_skill_library()
    world = World(scene.copy(), seed=0, skills=skills)
    domain = cached_domain(load_predicates(), skills, domain_types(scene))
    proposer = build_planner(PlannerSpec.parse(planner), parse_llm_spec("simulated:0"), domain, skills).proposer
    graph = SceneGraph(scene.rooms, world.robot)
    graph.integrate(world.observe(), 0)
    goal = Goal.parse(domain, goal_text, world.state().types)
    history: list[StepRecord] = []
    run = _Run([], [], 0)
    for step in range(1, decisions + 1):
        usage_before, calls_before = proposer.usage.seconds, proposer.usage.calls
        started = time.perf_counter()
        context = DecisionContext(instruction, goal, graph.symbolic_state(), describe_state(graph), graph, skills,
                                  tuple(history[-12:]), step)
        proposal = proposer.propose(context)
        wall = time.perf_counter() - started
        # every decision counts, the last one (`done` or no action) included: its time was spent too
        run.overhead_s.append(wall - (proposer.usage.seconds - usage_before))
        run.llm_calls += proposer.usage.calls - calls_before
        call = proposal.call
        run.calls.append(str(call))
        if call is None or call.skill == "done":
            break
        outcome = world.execute(call)
        graph.integrate(world.observe(), step)
        history.append(StepRecord(step, call, True, outcome.success, outcome.message, outcome.failure))
        if stream is not None:
            stream.write(f"  decision {step}: {call}  ({len(graph.objects)} objects in the belief)\n")
    return run
