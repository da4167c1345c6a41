"""The scene graph a real robot's planner reads: what perception fused, plus what the robot knows of
itself and its own doings that a camera cannot tell (or cannot tell yet).

A camera does not see what the gripper holds (perception forgets it once taken), that the fridge
it just closed its hand on is open, or that a drawer was searched. The skills do: each successful
skill is recorded through its PDDL effects (config/skills.yaml), so a new skill with effects needs
no code here. What the robot believes of an object's state after its own skill stands until the
next skill changes it; positions, labels and relations are perception's.

`assemble_observation` is the embedded stand-in's `observation_from` (bodies/embedded/perceiving_robot.py) for
a robot that has no simulator behind it: objects' rooms from the map's rooms, the robot's pose
from localisation, the held thing carried along at the robot.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from conceptagent_ros.scene.model import RobotState, Room, SceneObject, outermost_holder, room_at
from conceptagent_ros.scene.observation import Observation
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall

# Facts that are not an object's own state: where the robot is, what it holds, containment
_NOT_OBJECT_STATE = frozenset({"near", "holding", "hand_empty", "in", "searched"})

ApplyEffects = Callable[[SkillCall, SymbolicState], SymbolicState]  # planning/pddl/effects.EffectModel.apply


@dataclass
class SkillMemory:
    holding: str | None = None
    held: SceneObject | None = None  # the held thing as perception last showed it
    states: dict[str, dict[str, bool]] = field(default_factory=dict)  # object id -> flags its skills set
    searched: set[str] = field(default_factory=set)
    placed: dict[str, str] = field(default_factory=dict)  # object id -> where a skill put it
    put_down: dict[str, SceneObject] = field(default_factory=dict)  # what it put there, until perception sees it

    def record(self, call: SkillCall, before: SymbolicState, apply_effects: ApplyEffects,
               objects: Mapping[str, SceneObject]) -> list[str]:
        """Fold in a skill that succeeded, on the state the planner saw before it; returns the ids
        perception should forget (a thing the gripper took is no longer where it was seen)."""
        after = apply_effects(call, before)
        forget: list[str] = []
        for atom in sorted(after.atoms ^ before.atoms):
            value = atom in after.atoms
            name, args = atom[0], atom[1:]
            if name == "holding" and value:
                self.holding, self.held = args[0], objects.get(args[0], self.held)
                self.placed.pop(args[0], None)
                forget.append(args[0])
            elif name == "holding" and self.holding == args[0]:
                if self.held is not None:
                    self.put_down[args[0]] = self.held
                self.holding, self.held = None, None
            elif name == "searched" and value:
                self.searched.add(args[0])
            elif name == "in" and value:
                self.placed[args[0]] = args[1]
            elif len(args) == 1 and name not in _NOT_OBJECT_STATE:
                self.states.setdefault(args[0], {})[name] = value
        return forget

    def clear(self) -> None:
        self.holding, self.held = None, None
        self.states.clear()
        self.searched.clear()
        self.placed.clear()
        self.put_down.clear()


def assemble_observation(perceived: Sequence[SceneObject], position: tuple[float, float, float],
                         rooms: Mapping[str, Room], memory: SkillMemory, reach: float = 1.0,
                         last_room: str = "") -> Observation:
    """The planner's observation: perceived objects with the states the robot's skills left them in,
    rooms from the map, and the robot itself (pose, room, what it holds)."""
    robot_room = room_at(rooms, position[0], position[1]) or last_room
    by_id = {o.id: o for o in perceived if o.id != memory.holding}
    objects: list[SceneObject] = []
    for obj in by_id.values():
        parent = obj.parent if obj.parent in by_id else None
        if parent is None and memory.placed.get(obj.id) in by_id:
            parent = memory.placed[obj.id]  # put there by the robot; perception has not related them yet
        root = outermost_holder(by_id, obj)  # an object's room is where its outermost holder stands
        state = {**obj.state, **memory.states.get(obj.id, {})}
        objects.append(replace(obj, parent=parent, state=state,
                               room=room_at(rooms, root.position[0], root.position[1]) or obj.room or robot_room))
    for oid, receptacle in memory.placed.items():  # put down where the camera has not looked since
        thing = memory.put_down.get(oid)
        if oid not in by_id and oid != memory.holding and thing is not None and receptacle in by_id:
            where = by_id[receptacle]
            room = room_at(rooms, where.position[0], where.position[1]) or robot_room
            objects.append(replace(thing, parent=receptacle, room=room, position=where.position,
                                   state={**thing.state, **memory.states.get(oid, {})}))
    if memory.holding is not None:  # the gripper says what it holds, and it goes where the robot goes
        held = memory.held or SceneObject(id=memory.holding, category=memory.holding.rsplit("_", 1)[0],
                                          room=robot_room, position=position, affordances=frozenset({"pickupable"}))
        objects.append(replace(held, room=robot_room, position=position, parent=None,
                               state={**held.state, **memory.states.get(held.id, {})}))
    robot = RobotState(position, robot_room, memory.holding, reach)
    return Observation(robot, tuple(objects), (), tuple(sorted(memory.searched)))


@dataclass(frozen=True)
class Perceived:
    """One object as perception gives it: what the planner is told of it (position: its box's
    middle), and its box's footprint (x and y extent, turned by yaw), which reach may be measured to."""

    obj: SceneObject
    size: tuple[float, float]
    yaw: float = 0.0
