"""The calls a grounded agent offers its proposer at one step (DecisionContext.choices).

Precondition grounding, moved from after the proposal into it: a proposer that decodes under a
schema (planning/reply_schemas.choice_schema) can only pick one of these, as Grounded Decoding and
SayCan keep a model's choice within what the robot can do. A call is offered when its
preconditions hold, when the skill's PDDL effects change something about the call's own objects
(navigate_to an object already within reach does not), when it does not lead back to a state the
robot was in, and when the agent would run it at all. Once the goal holds, done() is the only
choice: anything else could only undo it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.scene.symbolic import Atom, SymbolicState
from conceptagent_ros.skills.contract import SkillCall

WITHIN_REACH = "near"  # the skill domain's predicate for "the robot can touch it" (config/skills.yaml)


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


def grounded_choices(
    feasible: Iterable[SkillCall],
    state: SymbolicState,
    effects: EffectModel,
    allowed: Callable[[SkillCall], bool] = lambda call: True,
    visited: Visited | None = None,
) -> tuple[SkillCall, ...]:
    """The feasible calls worth offering, in the skill library's order. `done()` has no effects and
    is offered as given; `allowed` is the agent's own refusals (a goal not met, a call that kept
    failing or succeeded here before). A call whose predicted state is one the robot was already
    in (`visited`) is not offered: it undoes what was done (a pick put straight back, a drive back
    to where it came from), and a plan that reaches the goal never needs a state twice."""
    offered = []
    for call in feasible:
        if not allowed(call):
            continue
        if call.args:
            after = effects.apply(call, state)
            if not changes_own_objects(call, state, after) or (visited is not None and after.atoms in visited):
                continue
        offered.append(call)
    return tuple(offered)
