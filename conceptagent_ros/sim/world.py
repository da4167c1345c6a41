"""The embedded household world: plays the robot and its sensors for the planner.

Truth lives here. A skill call is refused when the world's laws (the hand-written ground-truth
preconditions, evaluated on the true state) do not hold, may fail for physical reasons (seeded
failure injection: a grasp slips, the path is blocked), and otherwise changes the world. The robot
sees only what is in view: its room, within range, not inside closed containers, and things
tucked away only once it has searched their receptacle.
"""
from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.graph import derive_symbolic_state
from conceptagent_ros.scene.loader import domain_types
from conceptagent_ros.scene.model import RobotState, Scene, SceneObject, distance, holders
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.symbolic import SymbolicState, load_predicates
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary, SkillOutcome, load_skill_library

PHYSICAL_FAILURES = {
    "navigate_to": "the path was blocked by an obstacle; the robot stopped where it was",
    "pick": "the grasp slipped; {0} is still where it was",
    "place": "{0} slipped from the gripper while placing and is back in the hand",
    "open": "the handle slipped; {0} is still closed",
    "close": "the door bounced back; {0} is still open",
    "search": "the view into {0} was occluded; nothing new was found",
    "toggle_on": "the switch did not respond",
    "toggle_off": "the switch did not respond",
    "slice": "the knife slipped",
    "fill": "the container was not held under the tap",
    "pour": "the water missed",
    "heat": "the appliance did not start",
    "cool": "the appliance did not start",
    "clean": "the object slipped out of the water stream",
}


@dataclass(frozen=True)
class WorldRealism:
    """How the world reacts to a careless action: the world's own setting, which the episode chooses
    (from the simulated model's profile in a study: config/llm_profiles.yaml `world`)."""

    explain_failures: bool = True  # an infeasible action's failure names its unsatisfied preconditions
    drop_on_failure: float = 0.0  # a failed place drops the held object out of reach (irreversible)

    @classmethod
    def from_settings(cls, settings: Mapping[str, bool | float], source: str = "world") -> WorldRealism:
        """From a profile's `world` section; unknown names and out-of-range values are refused."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(settings) - names)
        if unknown:
            raise ConfigError(f"{source}: unknown field(s) {', '.join(unknown)}; the world's settings are "
                              f"{', '.join(sorted(names))}")
        realism = cls(explain_failures=bool(settings.get("explain_failures", True)),
                      drop_on_failure=float(settings.get("drop_on_failure", 0.0)))
        if not 0.0 <= realism.drop_on_failure <= 1.0:
            raise ConfigError(f"{source}: drop_on_failure must be in [0, 1]")
        return realism


class World:
    def __init__(
        self,
        scene: Scene,
        seed: int = 0,
        failure_rates: Mapping[str, float] | None = None,
        skills: SkillLibrary | None = None,
        realism: WorldRealism | None = None,
    ):
        self.scene = scene.copy()
        self.realism = realism or WorldRealism()
        self.lost: set[str] = set()  # objects dropped out of reach: no skill gets them back
        self.skills = skills or load_skill_library()
        self.rng = random.Random(seed)
        self.failure_rates = dict(scene.failures)
        self.failure_rates.update(failure_rates or {})
        self.robot = RobotState(scene.robot.start_position, scene.robot.start_room, None, scene.robot.reach)
        self.searched: set[str] = set()
        # The world's laws are the hand-written preconditions, whatever the planner is told.
        self.domain = cached_domain(load_predicates(), self.skills, domain_types(scene))
        self.laws = PreconditionVerifier(self.domain, self.skills, hint=self._hint)
        self.steps_executed = 0
        # Objects the last successful skill acted on: the robot knows their new state (its gripper
        # and the skill report it) even where the camera cannot see them, e.g. inside a closed fridge.
        self.touched: set[str] = set()

    # -- truth ----------------------------------------------------------------------------------
    def state(self) -> SymbolicState:
        return derive_symbolic_state(self.scene.rooms, self.scene.objects, self.robot, self.searched)

    def _hint(self, atom: tuple[str, ...], value: bool) -> str | None:
        if atom[0] == "near" and not value and atom[1] in self.scene.objects:
            d = distance(self.robot.position, self.scene.objects[atom[1]].position)
            return f"it is {d:.1f} m away, reach is {self.robot.reach:.1f} m"
        return None

    # -- perception -----------------------------------------------------------------------------
    def visible(self, obj: SceneObject) -> bool:
        if obj.id in self.lost:
            return False
        if obj.id == self.robot.holding or obj.id in self.touched:
            return True
        if obj.room != self.robot.room or distance(self.robot.position, obj.position) > self.scene.robot.view_range:
            return False
        return not self.enclosed(obj)

    def enclosed(self, obj: SceneObject, in_hand: str | None = None) -> bool:
        """Out of sight wherever the camera stands: inside something closed, tucked away in a
        receptacle nobody searched, or (given what the hand holds) inside the held thing."""
        parent_id = obj.parent
        child = obj
        while parent_id is not None:
            parent = self.scene.objects[parent_id]
            if parent.has("openable") and not parent.flag("open"):
                return True
            if child.hidden and parent_id not in self.searched:
                return True
            if in_hand is not None and parent_id == in_hand:
                return True
            child, parent_id = parent, parent.parent
        return False

    def observe(self) -> Observation:
        seen = tuple(copy.deepcopy(o) for o in self.scene.objects.values() if self.visible(o))
        seen_ids = {o.id for o in seen}
        inside = tuple(
            o.id for o in self.scene.objects.values()
            if o.id in seen_ids and o.has("receptacle") and (not o.has("openable") or o.flag("open"))
            and (o.id in self.searched or not any(c.hidden for c in self.scene.children(o.id)))
        )
        return Observation(copy.copy(self.robot), seen, inside, tuple(sorted(self.searched)))

    # -- acting ---------------------------------------------------------------------------------
    def execute(self, call: SkillCall) -> SkillOutcome:
        self.steps_executed += 1
        self.touched = set()
        gone = next((a for a in call.args if a in self.lost), None)
        if gone is not None:
            return SkillOutcome(call, False, f"{call} failed: {gone} is out of reach (it was dropped)", "irreversible")
        verdict = self.laws.verify(call, self.state())
        if verdict.invalid_call:
            return SkillOutcome(call, False, verdict.invalid_call, "invalid")
        if not verdict.feasible:
            return self._careless(call, verdict)
        if call.skill == "done":
            return SkillOutcome(call, True, "the robot declared the task done")
        rate = self.failure_rates.get(call.skill, 0.0)
        if rate > 0 and self.rng.random() < rate:
            text = PHYSICAL_FAILURES.get(call.skill, "the skill failed").format(*call.args)
            return SkillOutcome(call, False, f"{call} failed: {text}", "physical")
        # the domain refuses a receptacle directly in the held thing; deeper, physics does
        if call.skill == "place" and call.args[0] in {h.id for h in holders(self.scene.objects, self._obj(call.args[1]))}:
            return SkillOutcome(call, False, f"{call} failed: {call.args[1]} is inside {call.args[0]}", "physical")
        getattr(self, f"_do_{call.skill}")(*call.args)
        self.touched = {a for a in call.args if a in self.scene.objects}
        return SkillOutcome(call, True, f"{call} succeeded")

    def _careless(self, call: SkillCall, verdict: Any) -> SkillOutcome:
        """An action tried while its preconditions do not hold: it fails, and where the world's
        realism says so, it fails as a real skill does (no reason given) or costs the object."""
        held = self.robot.holding
        if (call.skill == "place" and held == call.args[0] and self.realism.drop_on_failure > 0
                and self.rng.random() < self.realism.drop_on_failure):
            self.robot.holding = None
            self.lost.add(held)
            obj = self._obj(held)
            obj.parent, obj.hidden = None, True
            return SkillOutcome(call, False, f"{call} failed: {held} fell from the gripper and rolled out of reach",
                                "irreversible")
        if not self.realism.explain_failures:
            return SkillOutcome(call, False, f"{call} failed: the skill did not succeed", "unexplained")
        reasons = "; ".join(u.reason for u in verdict.unsatisfied)
        return SkillOutcome(call, False, f"{call} failed: {reasons}", "precondition")

    def _obj(self, oid: str) -> SceneObject:
        return self.scene.objects[oid]

    def _move_with_contents(self, oid: str, position: tuple[float, float, float], room: str) -> None:
        obj = self._obj(oid)
        obj.position, obj.room = position, room
        for child in self.scene.children(oid):
            self._move_with_contents(child.id, position, room)

    def _do_navigate_to(self, target: str) -> None:
        if target in self.scene.rooms:
            self.robot.position, self.robot.room = self.scene.rooms[target].centre, target
        else:
            obj = self._obj(target)
            self.robot.position, self.robot.room = obj.position, obj.room
        if self.robot.holding:
            self._move_with_contents(self.robot.holding, self.robot.position, self.robot.room)

    def _do_search(self, receptacle: str) -> None:
        self.searched.add(receptacle)

    def _do_open(self, obj: str) -> None:
        self._obj(obj).state["open"] = True

    def _do_close(self, obj: str) -> None:
        self._obj(obj).state["open"] = False

    def _do_pick(self, obj: str) -> None:
        self._obj(obj).parent = None
        self.robot.holding = obj
        self._move_with_contents(obj, self.robot.position, self.robot.room)

    def _do_place(self, obj: str, receptacle: str) -> None:
        target = self._obj(receptacle)
        self._obj(obj).parent = receptacle
        self._obj(obj).hidden = False
        self.robot.holding = None
        self._move_with_contents(obj, target.position, target.room)

    def _do_toggle_on(self, obj: str) -> None:
        self._obj(obj).state["is_on"] = True

    def _do_toggle_off(self, obj: str) -> None:
        self._obj(obj).state["is_on"] = False

    def _do_slice(self, obj: str, tool: str) -> None:
        self._obj(obj).state["sliced"] = True

    def _do_fill(self, container: str, source: str) -> None:
        self._obj(container).state["filled"] = True

    def _do_pour(self, container: str, target: str) -> None:
        self._obj(container).state["filled"] = False
        self._obj(target).state["filled"] = True

    def _do_heat(self, obj: str, appliance: str) -> None:
        self._obj(obj).state.update(heated=True, cold=False)

    def _do_cool(self, obj: str, appliance: str) -> None:
        self._obj(obj).state.update(cold=True, heated=False)

    def _do_clean(self, obj: str, source: str) -> None:
        self._obj(obj).state["dirty"] = False
