"""The calls a grounded agent offers its proposer at one step (DecisionContext.choices).

Precondition grounding, moved from after the proposal into it: a proposer that decodes under a
schema (planning/reply_schemas.choice_schema) can only pick one of these, as Grounded Decoding and
SayCan keep a model's choice within what the robot can do. A call is offered when its
preconditions hold, when the skill's PDDL effects change something about the call's own objects
(navigate_to an object already within reach does not), when it does not lead back to a state the
robot was in, and when the agent would run it at all. A drive to a thing (not to a room) is offered
only when, once there, the robot can do something with what it reaches that it cannot do now, or
when the goal names it: the 1.5B model, holding an object, otherwise drove to every lamp and book in
view in the order listed (docs/benchmarks/local_model/). Once the goal holds, done() is the only
choice: anything else could only undo it.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence

from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.scene.symbolic import Atom, SymbolicState
from conceptagent_ros.skills.contract import SkillCall

WITHIN_REACH = "near"  # the skill domain's predicate for "the robot can touch it" (config/skills.yaml)
DRIVE = "navigate_to"
ROOM_TYPE = "room"  # a drive into a room explores it: what it holds is not known before


def _split(atoms: frozenset[Atom]) -> tuple[frozenset[Atom], frozenset[Atom]]:
    """(everything but what is within reach, what is within reach)."""
    reach = frozenset(a for a in atoms if a[0] == WITHIN_REACH)
    return atoms - reach, reach


class Visited:
    """The belief states the robot has decided in. A predicted state is one of them when all but
    `near` is the same and the robot was within reach of everything the prediction puts within
    reach: the effect model's navigate_to puts only the target and what is in it within reach,
    while the robot, once there, sees more within reach of where it stands."""

    def __init__(self, states: Iterable[frozenset[Atom]] = ()):
        self._reach: dict[frozenset[Atom], list[frozenset[Atom]]] = {}
        for atoms in states:
            self.add(atoms)

    def add(self, atoms: frozenset[Atom]) -> None:
        rest, reach = _split(atoms)
        self._reach.setdefault(rest, []).append(reach)

    def __contains__(self, atoms: object) -> bool:
        if not isinstance(atoms, frozenset):
            return False
        rest, reach = _split(atoms)
        return any(reach <= seen for seen in self._reach.get(rest, ()))


def changes_own_objects(call: SkillCall, state: SymbolicState, after: SymbolicState) -> bool:
    """Whether going from `state` to `after` adds or deletes an atom about one of the call's arguments."""
    changed = after.atoms ^ state.atoms
    return any(arg in atom[1:] for atom in changed for arg in call.args)


class DriveUse:
    """Whether a drive makes a call possible over what it brings within reach that is not possible
    before it: the calls over the newly reached objects (one argument among them, the others any known
    object), checked with the agent's own precondition test in the state the drive's effects predict."""

    def __init__(self, is_feasible: Callable[[SkillCall, SymbolicState], bool], arities: Sequence[tuple[str, int]]):
        self.is_feasible = is_feasible
        self.arities = [(skill, arity) for skill, arity in arities if arity > 0 and skill != DRIVE]

    def __call__(self, state: SymbolicState, after: SymbolicState) -> bool:
        reached = {a[1] for a in after.atoms - state.atoms if a[0] == WITHIN_REACH}
        ids = sorted(after.types)
        for skill, arity in self.arities:
            for args in itertools.product(ids, repeat=arity):
                if reached.isdisjoint(args):
                    continue
                call = SkillCall(skill, args)
                if self.is_feasible(call, after) and not self.is_feasible(call, state):
                    return True
        return False


def grounded_choices(
    feasible: Iterable[SkillCall],
    state: SymbolicState,
    effects: EffectModel,
    allowed: Callable[[SkillCall], bool] = lambda call: True,
    visited: Visited | None = None,
    drive_use: Callable[[SymbolicState, SymbolicState], bool] | None = None,
    goal_objects: Iterable[str] = (),
) -> tuple[SkillCall, ...]:
    """The feasible calls worth offering, in the skill library's order. `done()` has no effects and
    is offered as given; `allowed` is the agent's own refusals (a goal not met, a call that kept
    failing or succeeded here before). A call whose predicted state is one the robot was already
    in (`visited`) is not offered: it undoes what was done (a pick put straight back, a drive back
    to where it came from), and a plan that reaches the goal never needs a state twice. With
    `drive_use` (DriveUse), a drive to a thing that makes nothing new possible is not offered, unless
    the goal names the thing (`goal_objects`): holding the apple before a closed fridge, the way on is
    to go there, put the apple down and open it, two steps further than DriveUse looks."""
    kept = frozenset(goal_objects)
    offered = []
    for call in feasible:
        if not allowed(call):
            continue
        if call.args:
            after = effects.apply(call, state)
            if not changes_own_objects(call, state, after) or (visited is not None and after.atoms in visited):
                continue
            if (drive_use is not None and call.skill == DRIVE and call.args[0] not in kept
                    and not state.has_type(call.args[0], ROOM_TYPE) and not drive_use(state, after)):
                continue
        offered.append(call)
    return tuple(offered)
