"""The scene graph: what the robot believes about its surroundings, built while it moves.

It starts with the map's rooms and nothing else (no pre-scan), integrates observations, and
derives the symbolic state the planner reasons on and the text an LLM reads.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping

from conceptagent_ros.scene.model import RobotState, Room, SceneObject, distance
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.symbolic import SymbolicState

ROOM_TYPE = "room"


def derive_symbolic_state(
    rooms: Mapping[str, Room],
    objects: Mapping[str, SceneObject],
    robot: RobotState,
    searched: set[str] | frozenset[str],
) -> SymbolicState:
    """Atoms of the state: affordances, object state, containment, reach, what is held."""
    atoms: set[tuple[str, ...]] = set()
    types: dict[str, str] = {rid: ROOM_TYPE for rid in rooms}
    for rid in rooms:
        if robot.room == rid:
            atoms.add(("near", rid))
    for obj in objects.values():
        types[obj.id] = obj.category
        for affordance in obj.affordances:
            atoms.add((affordance, obj.id))
        for key, value in obj.state.items():
            if value:
                atoms.add((key, obj.id))
        if obj.parent is not None and obj.parent in objects:
            atoms.add(("in", obj.id, obj.parent))
        if robot.holding == obj.id:
            atoms.add(("holding", obj.id))
            atoms.add(("near", obj.id))
        elif distance(robot.position, obj.position) <= robot.reach + 1e-9:
            atoms.add(("near", obj.id))
    for rid in searched:
        if rid in objects:
            atoms.add(("searched", rid))
    if robot.holding is None:
        atoms.add(("hand_empty",))
    return SymbolicState(frozenset(atoms), types)


class SceneGraph:
    """The robot's belief. Objects are copies of what was last observed."""

    def __init__(self, rooms: Mapping[str, Room], robot: RobotState):
        self.rooms = dict(rooms)
        self.robot = copy.copy(robot)
        self.objects: dict[str, SceneObject] = {}
        self.searched: set[str] = set()
        self.visited_rooms: set[str] = {robot.room}
        self.last_seen: dict[str, int] = {}

    def integrate(self, observation: Observation, step: int = 0) -> list[str]:
        """Fold an observation in; returns the ids seen for the first time."""
        self.robot = copy.copy(observation.robot)
        self.visited_rooms.add(self.robot.room)
        self.searched.update(observation.searched)
        seen = {o.id for o in observation.objects}
        for receptacle in observation.receptacles_seen_inside:
            for obj in list(self.objects.values()):
                if obj.parent == receptacle and obj.id not in seen:
                    del self.objects[obj.id]  # it is not where we thought; forget the stale place
        new: list[str] = []
        for obj in observation.objects:
            if obj.id not in self.objects:
                new.append(obj.id)
            self.objects[obj.id] = copy.deepcopy(obj)
            self.last_seen[obj.id] = step
        return new

    def symbolic_state(self) -> SymbolicState:
        return derive_symbolic_state(self.rooms, self.objects, self.robot, self.searched)

    def describe(self) -> str:
        from conceptagent_ros.scene.state_text import describe_state  # at call time: state_text imports this module

        return describe_state(self)

    def unvisited_rooms(self) -> list[str]:
        """The map's rooms the robot has not been in, sorted."""
        return sorted(set(self.rooms) - self.visited_rooms)

    def frontier_size(self) -> int:
        """How much is still unexplored: rooms never visited and receptacles never searched. Planners
        that give up after a number of re-plans scale that number with it."""
        rooms = len(self.unvisited_rooms())
        receptacles = sum(1 for o in self.objects.values() if o.has("receptacle") and o.id not in self.searched)
        return rooms + receptacles

    def distance_to(self, object_id: str) -> float | None:
        if object_id in self.objects:
            return distance(self.robot.position, self.objects[object_id].position)
        if object_id in self.rooms:
            return distance(self.robot.position, self.rooms[object_id].centre)
        return None

    def near_hint(self, atom: tuple[str, ...], value: bool) -> str | None:
        """Distances behind `near` verdicts, for the verifier's feedback."""
        if atom[0] == "near" and len(atom) == 2 and not value:
            d = self.distance_to(atom[1])
            if d is not None and atom[1] not in self.rooms:
                return f"it is {d:.1f} m away, reach is {self.robot.reach:.1f} m"
        return None
