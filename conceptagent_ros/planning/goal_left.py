"""What is left of a task's goal, in the words a small model acts on: the "Still to do:" and "Now:"
lines of ReAct's request (config/prompts/react_user.txt).

A placement, `(in apple_1 fridge_1)` or `(exists (?a - apple ?f - fridge) (in ?a ?f))`, is said as
its two steps while the object is not held ("1. pick up apple_1 2. put it in/on fridge_1") and as
the second once it is; a variable with one candidate among the objects seen is said as that object.
Beside it stand the facts it turns on: where the object is, whether the robot can reach it, what the
hand holds, and where it goes once it is held or while that is closed. Every wording here was
chosen on the 1.5B local model's development tasks (docs/benchmarks/local_model/): told "put apple_1 in/on dining_table_1"
it drove to the table first; told the goal in PDDL it read `(in sponge_1 bowl_1)` as a reason to
pick the bowl up; told "the rooms not visited" it drove between the furniture of the room it stood in.
"""
from __future__ import annotations

from dataclasses import dataclass

from unified_planning.model import FNode

from conceptagent_ros.planning.pddl.compile import type_name
from conceptagent_ros.planning.pddl.explain import render
from conceptagent_ros.planning.proposal import DecisionContext
from conceptagent_ros.scene.symbolic import SymbolicState

MAX_NAMED = 3  # candidates of a variable named in words ("any countertop (countertop_1, countertop_2)")


@dataclass(frozen=True)
class Slot:
    """One argument of a placement: the objects seen that can fill it, and how it is said."""

    candidates: tuple[str, ...]
    words: str


@dataclass(frozen=True)
class Placement:
    thing: Slot
    where: Slot


def _slot(arg: FNode, variables: set[str], state: SymbolicState) -> Slot | None:
    if arg.is_object_exp():
        name = arg.object().name
        return Slot((name,), name)
    if not arg.is_variable_exp() or arg.variable().name not in variables:
        return None
    kind = type_name(arg.variable().type)
    candidates = tuple(sorted(state.objects_of_type(kind)))
    if len(candidates) == 1:
        return Slot(candidates, candidates[0])
    named = f" ({', '.join(candidates)})" if 1 < len(candidates) <= MAX_NAMED else ""
    return Slot(candidates, f"any {kind}{named}")


def placement(part: FNode, state: SymbolicState) -> Placement | None:
    """The placement a goal conjunct asks for (`in` over objects, or over variables it quantifies
    existentially); None for any other conjunct."""
    variables: set[str] = set()
    if part.is_exists():
        variables = {v.name for v in part.variables()}
        part = part.arg(0)
    if not (part.is_fluent_exp() and part.fluent().name == "in" and len(part.args) == 2):
        return None
    thing, where = (_slot(a, variables, state) for a in part.args)
    return Placement(thing, where) if thing is not None and where is not None else None


def held_object(state: SymbolicState) -> str | None:
    return next((a[1] for a in state.atoms if a[0] == "holding"), None)


def goal_words(part: FNode, asked: Placement | None, held: str | None) -> str:
    """A goal conjunct as the task it sets: a placement (`asked`, placement() of it) in its steps
    (module docstring), anything else in PDDL."""
    if asked is None:
        return render(part, {})
    if held is not None and held in asked.thing.candidates:
        return f"put {held} in/on {asked.where.words}"
    return f"1. pick up {asked.thing.words} 2. put it in/on {asked.where.words}"


def _closed(name: str, state: SymbolicState) -> bool:
    return ("openable", name) in state.atoms and ("open", name) not in state.atoms


def _fact_objects(part: FNode, asked: Placement | None, held: str | None, state: SymbolicState) -> list[str]:
    """The objects of a goal conjunct whose place and reach the model is told: of a placement, the
    object, and where it goes once the object is held or while it is closed (where that is a few
    named things: a closed fridge wants opening with an empty hand); of any other conjunct, all it
    names."""
    if asked is None:
        body = part.arg(0) if part.is_exists() else part
        return [a.object().name for a in body.args if a.is_object_exp()] if body.is_fluent_exp() else []
    things = [held] if held is not None and held in asked.thing.candidates else list(asked.thing.candidates)[:MAX_NAMED]
    if len(asked.where.candidates) > MAX_NAMED:
        return things
    return things + [w for w in asked.where.candidates if held in asked.thing.candidates or _closed(w, state)]


def goal_facts(context: DecisionContext, names: list[str], held: str | None) -> str:
    """Where each of `names` is and whether the robot can touch it, and what the hand holds (`held`)."""
    atoms = context.state.atoms
    facts = []
    for name in dict.fromkeys(names):
        if name == held:
            facts.append(f"{name} is held")
            continue
        if name not in context.state.types:  # not seen yet: goal_text says so
            continue
        parent = next((a[2] for a in atoms if a[0] == "in" and a[1] == name), None)
        where = f"in/on {parent}, " if parent else ""
        closed = "closed, " if _closed(name, context.state) else ""
        reach = "within reach" if ("near", name) in atoms else "not within reach"
        facts.append(f"{name} is {where}{closed}{reach}")
    if held not in names:
        facts.append(f"the hand holds {held}" if held else "the hand is empty")
    return "; ".join(facts)


def goal_text(context: DecisionContext) -> str:
    """What is left of the task's goal in the robot's belief: its unmet conjuncts in words, the
    goal's objects (or kinds) not seen yet and where to look for them, and on a line of its own the
    facts they turn on. The agent checks done() against the same goal."""
    if context.goal is None:
        return "(no formal goal: follow the instruction)"
    state = context.state
    parts = context.goal.unmet_parts(state)
    if not parts:
        return "nothing: the goal holds, call done()"
    held = held_object(state)
    asked = [placement(part, state) for part in parts]
    unseen = sorted(o for o in context.goal.objects if o not in state.types)
    unseen += sorted({slot.words for placed in asked if placed is not None
                      for slot in (placed.thing, placed.where) if not slot.candidates})
    look = ""
    if unseen:
        rooms = context.graph.unvisited_rooms()
        where = f"the rooms not visited ({', '.join(rooms)}) or in closed containers" if rooms else "closed containers"
        look = f" ({', '.join(unseen)} not observed yet: look for {'them' if len(unseen) > 1 else 'it'} in {where})"
    names = [name for part, placed in zip(parts, asked) for name in _fact_objects(part, placed, held, state)]
    words = "; ".join(goal_words(part, placed, held) for part, placed in zip(parts, asked))
    return words + look + f"\nNow: {goal_facts(context, names, held)}."
