"""The `offline` backend: no model, no network. It proposes actions by classical planning over the
robot's belief (Fast Downward on the skills' preconditions and effects), explores when the goal
names objects it has not seen. It is the oracle of the simulated backend (planning/oracles/simulated.py).

It needs a formal goal: a task's PDDL goal, or one interpreted from the instruction
(planning/instruction.py). It is the default of `make run`, and the reference every LLM planner
is measured against.
"""
from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

import yaml

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.paths import config_dir
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.planning.proposal import DecisionContext, Proposal, StepRecord, TokenUsage
from conceptagent_ros.planning.symbolic_planner import SymbolicPlanner, robot_location
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.graph import ROOM_TYPE, SceneGraph
from conceptagent_ros.scene.model import distance
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary

# Physical failures of one step of a search plan after which the place is left unsearched (the
# agent refuses a call's fourth try in any case: AgentConfig.max_call_failures)
GIVE_UP_AFTER = 3


@lru_cache(maxsize=1)
def load_priors() -> dict[str, dict[str, list[str]]]:
    """config/priors.yaml, read once: `likely_in` and `goal_needs`."""
    path = config_dir() / "priors.yaml"
    return dict(yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.is_file() else {}


def likely_places() -> dict[str, list[str]]:
    return dict(load_priors().get("likely_in", {}))


def goal_needs() -> dict[str, list[str]]:
    return dict(load_priors().get("goal_needs", {}))


def needed_categories(goal_text: str) -> set[str]:
    """Categories of tools a goal needs: `(sliced ...)` needs a slicer, i.e. a knife."""
    from conceptagent_ros.scene.loader import category_defaults

    affordances = {a for pred, needs in goal_needs().items() if f"({pred} " in goal_text for a in needs}
    return {c for c, d in category_defaults().items() if affordances & set(d.get("affordances", []))}


def guess_category(object_id: str) -> str:
    """`apple_1` -> `apple`: ids of the built-in scenes follow this convention."""
    return re.sub(r"_\d+$", "", object_id)


class OfflineBackend:
    name = "offline"

    def __init__(self, domain: PDDLDomain, skills: SkillLibrary, planner_timeout: float = 30.0):
        self.domain = domain
        self.skills = skills
        self.planner = SymbolicPlanner(domain, timeout=planner_timeout)
        self.verifier = PreconditionVerifier(domain, skills)
        self.usage = TokenUsage()  # stays at zero: no model is called
        self._plan: list[SkillCall] = []
        self._purpose = ""
        self._known: frozenset[str] = frozenset()
        self._given_up: set[str] = set()
        self._avoided: set[str] = set()  # receptacles a place failed on physically, that the goal does not name
        self._exploring: str | None = None  # the place the plan being followed searches
        self._failed: dict[SkillCall, int] = {}  # physical failures of each call of a search plan

    # -- proposing --------------------------------------------------------------------------------
    def propose(self, context: DecisionContext) -> Proposal:
        goal = context.goal
        if goal is None:
            return Proposal(None, error="the offline backend needs a formal goal (a task goal or --goal)")
        state = context.state
        if goal.holds(state):
            return Proposal(SkillCall("done"), raw="the goal holds in the observed state")
        last = context.history[-1] if context.history else None
        if last is not None and not last.success and last.call is not None and self._gave_up_exploring(last):
            self._plan = []
        elif last is not None and self._plan and last.call == self._plan[0]:
            if last.success:
                self._plan.pop(0)
            elif last.failure != "physical":  # a physical failure is retried; anything else replans
                self._plan = []
            elif last.call.skill == "place" and last.call.args[-1] not in goal.objects:
                # the body could not put it there (no room, out of reach): where the goal leaves the
                # receptacle open (any shelf), another one is a better next try than the same again
                self._avoided.add(last.call.args[-1])
                self._plan = []
        elif last is not None and not last.success:
            self._plan = []
        if self._plan and self._purpose != "goal" and set(state.types) - self._known:
            self._plan = []  # new objects in view: the goal may be reachable now
        if self._plan and not self.verifier.is_feasible(self._plan[0], state):
            self._plan = []
        note = ""
        if not self._plan:
            note = self._replan(context)
        if not self._plan:
            return Proposal(SkillCall("done"), raw=f"giving up: {note}")
        return Proposal(self._plan[0], raw=f"{self._purpose}: {' -> '.join(map(str, self._plan))}", thought=note)

    def _gave_up_exploring(self, last: StepRecord) -> bool:
        """A place the robot cannot search (a door it cannot open, however often it tries) is given
        up after GIVE_UP_AFTER physical failures of the same step, or when the agent refuses the step
        for failing too often: looking elsewhere beats spending the episode on one door. A step
        towards the goal itself is not given up here: it is retried as the agent allows."""
        if self._exploring is None or self._purpose == "goal" or last.call not in self._plan[:1]:
            return False
        assert last.call is not None
        if last.failure == "physical":
            self._failed[last.call] = self._failed.get(last.call, 0) + 1
        if last.failure == "repeated" or self._failed.get(last.call, 0) >= GIVE_UP_AFTER:
            self._given_up.add(self._exploring)
            self._exploring = None
            return True
        return False

    def _replan(self, context: DecisionContext) -> str:
        goal, state, graph = context.goal, context.state, _scene_graph(context)
        assert goal is not None
        positions = {o.id: o.position for o in graph.objects.values()}
        here = robot_location(state, positions, graph.robot.position, graph.robot.room)
        goal_types = {t for t in _quantified_types(goal.text) if t != "object"}
        unknown = set(goal.objects) - set(state.types)
        self._known = frozenset(state.types)
        if not unknown:
            keep = self.planner.relevant_objects(state, goal.objects, goal_types)
            result = self.planner.plan(state, goal.text, graph.robot.room if here in self._avoided else here,
                                       keep - self._avoided) if keep & self._avoided else None
            if result is None or not result.plan:
                result = self.planner.plan(state, goal.text, here, keep)
            if result.plan and here != graph.robot.room and not self.verifier.is_feasible(result.plan[0], state):
                # The planner's axiom has the robot near all that `here` holds; a robot at one end of a
                # long table reaches the table, not the cup at the far end. Plan from the room instead,
                # so the plan goes to the thing first rather than proposing the same refused call again.
                result = self.planner.plan(state, goal.text, graph.robot.room, keep)
            if result.plan:
                self._plan, self._purpose = _to_the_thing(list(result.plan), state.atoms), "goal"
                self._exploring = None
                return f"planned {len(result.plan)} steps to the goal"
        sought = {guess_category(o) for o in unknown} | goal_types
        if not sought:  # everything named is known, yet no plan: a tool must be missing
            sought = needed_categories(goal.text)
        for target in self._exploration_targets(context, sought):
            self._exploring = target
            if target in graph.rooms:
                self._plan, self._purpose = [SkillCall("navigate_to", (target,))], f"explore {target}"
                return f"looking for {', '.join(sorted(sought)) or 'what the goal needs'} in {target}"
            result = self.planner.plan(state, f"(searched {target})", here,
                                       self.planner.relevant_objects(state, {target}, ()))
            if result.plan:
                self._plan, self._purpose = list(result.plan), f"search {target}"
                return f"looking for {', '.join(sorted(sought)) or 'what the goal needs'} in {target}"
            self._given_up.add(target)
        return "the goal cannot be reached from what has been observed, and nothing is left to explore"

    def _exploration_targets(self, context: DecisionContext, sought: set[str]) -> list[str]:
        graph, state = _scene_graph(context), context.state
        places = likely_places()
        ranks: dict[str, int] = {}
        for category in sought:
            for i, place in enumerate(places.get(category, [])):
                ranks[place] = min(ranks.get(place, 99), i)
        scored: list[tuple[int, int, float, str]] = []
        for room_id, room in graph.rooms.items():
            if room_id not in graph.visited_rooms:
                scored.append((1, 0, distance(graph.robot.position, room.centre), room_id))
        for obj in graph.objects.values():
            if (not obj.has("receptacle") or obj.id in graph.searched or obj.id in self._given_up
                    or ("holding", obj.id) in state.atoms):
                continue
            rank = ranks.get(obj.category, 99)
            tier = 0 if rank < 99 else (2 if obj.has("openable") else 3)
            scored.append((tier, rank, distance(graph.robot.position, obj.position), obj.id))
        return [target for *_, target in sorted(scored)][:4]

    @property
    def remaining_plan(self) -> tuple[SkillCall, ...]:
        """The plan being followed, first step next (after the last `propose`)."""
        return tuple(self._plan)

    @property
    def plan_reaches_goal(self) -> bool:
        return self._purpose == "goal"


def _to_the_thing(plan: list[SkillCall], atoms: Collection[tuple[str, ...]]) -> list[SkillCall]:
    """A plan that starts by going to what the robot is already near (the planner's axiom has it
    near all that a place holds, the body's reach does not: a toaster at the far end of a 1.2 m
    counter) goes to the thing the next step acts on instead. Without this the robot went to the
    same counter again and again until the step budget ran out."""
    if len(plan) < 2 or plan[0].skill != "navigate_to" or ("near", plan[0].args[0]) not in atoms:
        return plan
    follow = plan[1]
    if not follow.args:
        return plan
    target = follow.args[-1] if follow.skill == "place" else follow.args[0]
    return [SkillCall("navigate_to", (target,)), *plan[1:]] if target != plan[0].args[0] else plan


def _scene_graph(context: DecisionContext) -> SceneGraph:
    """This oracle plans where things are and where to look: it needs the household's scene graph."""
    if not isinstance(context.graph, SceneGraph):
        raise ConceptAgentError("the offline oracle plans over a household scene graph; give the simulated "
                                "model an oracle of its own for other worlds (planning/oracles/simulated.py)")
    return context.graph


def _quantified_types(goal_text: str) -> set[str]:
    return set(re.findall(r"\?\w+\s*-\s*([a-z][a-z0-9_]*)", goal_text)) - {ROOM_TYPE}
