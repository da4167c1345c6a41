"""What a robot believes from its perception and its own skills: the scene graph node's work
(ros/scene_graph_node.py), in core so that a robot with no ROS graph (the physical household
body's `--perception camera`, bodies/household/perceiving_body.py) builds the planner's observation the
same way: perceived objects, the base's pose, and each successful skill folded in through its PDDL
effects (scene/robot_memory.SkillMemory)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from conceptagent_ros.planning.pddl.domain import cached_domain
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.task import TaskMap
from conceptagent_ros.scene.geometry import nearest_in_footprint
from conceptagent_ros.scene.graph import derive_symbolic_state
from conceptagent_ros.scene.model import Room, SceneObject
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.robot_memory import ApplyEffects, Perceived, SkillMemory, assemble_observation
from conceptagent_ros.scene.symbolic import load_predicates
from conceptagent_ros.skills.contract import SkillCall, load_skill_library

REACH_TO = ("centre", "edge")


class RobotBelief:
    """The belief of one robot over a map's rooms. `reach_to`: what reach is measured to from the
    base -- "centre" (each thing's box middle, as the embedded world measures) or "edge" (the
    nearest point of its footprint, as an arm reaching for some of it does)."""

    def __init__(self, rooms: Mapping[str, Room], reach: float = 1.0, reach_to: str = "centre"):
        if reach_to not in REACH_TO:
            raise ValueError(f"reach_to must be centre or edge, not {reach_to!r}")
        self.rooms, self.reach, self.reach_to = dict(rooms), reach, reach_to
        self.memory = SkillMemory()
        self.room = ""  # the room last known: where a pose between rooms is taken to be
        self._effects: dict[frozenset[str], ApplyEffects] = {}

    def observation(self, perceived: Sequence[Perceived], position: tuple[float, float, float]) -> Observation:
        objects = [self._placed(p, position) for p in perceived]
        observation = assemble_observation(objects, position, self.rooms, self.memory, self.reach, self.room)
        self.room = observation.robot.room
        return observation

    def _placed(self, perceived: Perceived, position: tuple[float, float, float]) -> SceneObject:
        obj = perceived.obj
        if self.reach_to == "centre":
            return obj
        x, y = nearest_in_footprint((obj.position[0], obj.position[1]), perceived.size, perceived.yaw,
                                    (position[0], position[1]))
        return replace(obj, position=(x, y, obj.position[2]))

    def record(self, call: SkillCall, perceived: Sequence[Perceived], position: tuple[float, float, float],
               vocabulary: set[str]) -> list[str]:
        """Fold in a skill that succeeded, on what the planner saw before it (its PDDL effects over the
        words perception knows, `vocabulary`); returns the ids perception should forget."""
        observation = self.observation(perceived, position)
        objects = {o.id: o for o in observation.objects}
        before = derive_symbolic_state(self.rooms, objects, observation.robot, set(observation.searched))
        return self.memory.record(call, before, self._effect_model(vocabulary | self.room_words()), objects)

    def room_words(self) -> set[str]:
        return {r.category for r in self.rooms.values()}

    def _effect_model(self, vocabulary: set[str]) -> ApplyEffects:
        key = frozenset(vocabulary)
        if key not in self._effects:
            types = TaskMap(self.rooms, key).domain_types()
            self._effects[key] = EffectModel(cached_domain(load_predicates(), load_skill_library(), types)).apply
        return self._effects[key]

    def clear(self, rooms: Mapping[str, Room] | None = None) -> None:
        """A new run: what the skills did is forgotten (and the map's rooms replaced, where given)."""
        self.memory.clear()
        self.room = ""
        if rooms is not None:
            self.rooms = dict(rooms)
