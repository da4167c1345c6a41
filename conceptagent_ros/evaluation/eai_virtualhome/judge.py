"""Scoring as the benchmark scores: node goals, edge goals and action goals from the task's JSON.

The judge reads the goals the benchmark states (node ids, VirtualHome states and relations), not the
PDDL problem's goal, and asks the world only whether single facts hold and which actions ran. So an
error in how a PDDL goal was read, or in a planner's notion of done, shows up here.

VirtualHome graph vocabulary -> the domain's predicates (data/pddl/virtualhome.pddl):
- a node state S of object x holds when (s x) does: ON -> (on x), PLUGGED_IN -> (plugged_in x), ...
- an edge (a, REL, b): from the character, ON -> (ontop char b), INSIDE -> (inside char b),
  CLOSE -> (next_to char b), FACING, HOLDS_RH, HOLDS_LH as named; between objects, ON ->
  (obj_ontop a b) or (on_char a char), INSIDE -> (obj_inside a b) or (inside_room a b) for a room,
  CLOSE -> (obj_next_to a b).
- an action goal names a VirtualHome script action (LOOKAT, SWITCHOFF); the domain's action of the
  same letters (look_at, switch_off) satisfies it. The goals must appear in order, as a subsequence.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conceptagent_ros.evaluation.eai_virtualhome.task_files import EAITask, EdgeGoal, NodeGoal

Holds = Callable[[str, tuple[str, ...]], bool]
CHARACTER = "character"
ROOM_CATEGORY = "Rooms"
CHARACTER_RELATIONS = {"ON": "ontop", "INSIDE": "inside", "CLOSE": "next_to", "FACING": "facing",
                       "HOLDS_RH": "holds_rh", "HOLDS_LH": "holds_lh"}
OBJECT_RELATIONS = {"ON": "obj_ontop", "INSIDE": "obj_inside", "CLOSE": "obj_next_to"}


@dataclass(frozen=True)
class Score:
    node_met: int
    node_total: int
    edge_met: int
    edge_total: int
    action_met: int
    action_total: int
    unmet: tuple[str, ...]

    @property
    def success(self) -> bool:
        return not self.unmet and self.total > 0

    @property
    def total(self) -> int:
        return self.node_total + self.edge_total + self.action_total

    @property
    def recall(self) -> float:
        """Share of goal conditions met (node, edge and action goals together)."""
        return (self.node_met + self.edge_met + self.action_met) / self.total if self.total else 0.0


def node_fact(task: EAITask, goal: NodeGoal) -> tuple[str, tuple[str, ...]]:
    return goal.state.lower(), (_name(task, goal.node),)


def edge_fact(task: EAITask, goal: EdgeGoal) -> tuple[str, tuple[str, ...]] | None:
    source, target = _name(task, goal.source), _name(task, goal.target)
    if source == CHARACTER:
        predicate = CHARACTER_RELATIONS.get(goal.relation)
        return (predicate, (source, target)) if predicate else None
    if target == CHARACTER and goal.relation == "ON":
        return "on_char", (source, target)
    if goal.relation == "INSIDE" and task.categories.get(goal.target) == ROOM_CATEGORY:
        return "inside_room", (source, target)
    predicate = OBJECT_RELATIONS.get(goal.relation)
    return (predicate, (source, target)) if predicate else None


def script_name(action: str) -> str:
    """The domain's `look_at` as VirtualHome's script action LOOKAT."""
    return action.replace("_", "").upper()


def action_goals_met(goals: Sequence[tuple[str, ...]], executed: Sequence[str]) -> int:
    """How many of the ordered goals the executed actions cover as a subsequence (greedy, in order)."""
    met, position = 0, 0
    names = [script_name(a) for a in executed]
    for alternatives in goals:
        while position < len(names) and names[position] not in alternatives:
            position += 1
        if position == len(names):
            break
        met += 1
        position += 1
    return met


def score(task: EAITask, holds: Holds, executed: Sequence[str]) -> Score:
    unmet: list[str] = []
    node_met = 0
    for goal in task.node_goals:
        predicate, args = node_fact(task, goal)
        if holds(predicate, args):
            node_met += 1
        else:
            unmet.append(f"{goal.state} {goal.class_name}.{goal.node}")
    edge_met = 0
    for edge in task.edge_goals:
        fact = edge_fact(task, edge)
        if fact is not None and holds(*fact):
            edge_met += 1
        else:
            unmet.append(f"{_name(task, edge.source)}.{edge.source} {edge.relation} {_name(task, edge.target)}.{edge.target}")
    action_met = action_goals_met(task.action_goals, executed)
    unmet.extend(f"action {'|'.join(a)}" for a in task.action_goals[action_met:])
    return Score(node_met, len(task.node_goals), edge_met, len(task.edge_goals), action_met, len(task.action_goals),
                 tuple(unmet))


def _name(task: EAITask, node: int) -> str:
    """PDDL objects are class names (the benchmark's problems collapse instances of a class)."""
    return CHARACTER if node == task.character else task.classes.get(node, f"node_{node}")
