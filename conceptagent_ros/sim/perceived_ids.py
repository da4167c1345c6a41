"""Which of the simulator's things a perceived id means, for the embedded robot with a camera
(bodies/embedded/perceiving_robot.py), the ROS robot stand-in and the physical household body behind the ROS
graph (ros/manipulation_node.py) alike: one class, so every path resolves the same way.

Perception names what it fuses (`fridge_2`); a skill call names those ids; the simulator acts on its
own things. A perceived thing is the one the oracle named, else the nearest thing of its kind to
where it was seen. An id the planner took from an earlier observation may since have been fused
into another (two views of one fridge, the younger name dropped): it still means the thing where
it was last seen. Only such ids: a held thing is not in the map either, and where it was last seen
(beside another of its kind, perhaps) no longer says which one it is.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from conceptagent_ros.perception.fusion import ObjectMap
from conceptagent_ros.perception.map_objects import map_relations
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.skills.contract import SkillCall


class Placed(Protocol):
    """Where one of the simulator's things is now (house_geometry.Box has it)."""

    @property
    def center(self) -> tuple[float, float, float]: ...


@dataclass(frozen=True)
class PerceivedThing:
    """What perception says of one object, whoever perceived it (the map here, the perception node
    over ROS): enough to tell the agent, and to find the world's thing a skill call means."""

    id: str
    label: str
    centre: tuple[float, float, float]  # of its box
    top: float
    parent: str | None = None
    state: dict[str, bool] = field(default_factory=dict)
    hint: str | None = None  # the simulator's id, where an oracle gave one


def resolve(scene: Scene, boxes: Mapping[str, Placed], thing: PerceivedThing | None, name: str) -> str:
    """The scene's thing a perceived object is: the one the oracle named, else the nearest thing
    of the same kind to its box centre. Rooms and unknown names pass through."""
    if name in scene.rooms or thing is None:
        return name
    if thing.hint:
        return thing.hint
    same = [o for o in scene.objects.values() if o.category == thing.label.replace(" ", "_") and o.id in boxes]
    if not same:
        return name
    return min(same, key=lambda o: math.dist(boxes[o.id].center, thing.centre)).id


class PerceivedIdResolver:
    """Resolves skill arguments named by perception to the world's things; remembers every perceived
    id where it was last seen (`remember`), so an id fused away since still means that thing."""

    def __init__(self, scene: Scene, boxes: Callable[[], Mapping[str, Placed]], holding: Callable[[], str | None]):
        self.scene = scene
        self.boxes = boxes  # where the simulator's things are now (the camera's layout, PyBullet's poses)
        self.holding = holding  # what the gripper holds (a scene id)
        self.remembered: dict[str, PerceivedThing] = {}

    def remember(self, things: Iterable[PerceivedThing]) -> None:
        self.remembered.update((t.id, t) for t in things)

    def thing_of(self, thing: PerceivedThing) -> str:
        return resolve(self.scene, self.boxes(), thing, thing.id)

    def not_held(self, things: Iterable[PerceivedThing]) -> list[PerceivedThing]:
        """What perception shows, less what the gripper holds (the map may still show it where it was)."""
        held = self.holding()
        return [t for t in things if held is None or self.thing_of(t) != held]

    def resolve_name(self, name: str, current: Mapping[str, PerceivedThing]) -> str:
        thing = current.get(name)
        if thing is None and name not in self.scene.objects:
            thing = self.remembered.get(name)
        return resolve(self.scene, self.boxes(), thing, name)

    def resolve_call(self, call: SkillCall, current: Iterable[PerceivedThing]) -> SkillCall:
        """`call` with every argument the scene's thing it means."""
        by_id = {t.id: t for t in current}
        return SkillCall(call.skill, tuple(self.resolve_name(a, by_id) for a in call.args))


def map_things(object_map: ObjectMap) -> list[PerceivedThing]:
    """What the map says of each object, as the id resolver (sim/perceived_ids.py) reads it: its box
    middle and top, what it stands on or in, and the simulator's id where an oracle gave one."""
    parents = {r.subject: r.object for r in map_relations(object_map) if r.relation in ("on", "in")}
    return [PerceivedThing(o.id, o.label, o.box.center, o.box.z_max, parents.get(o.id), dict(o.state),
                           o.hint_votes.most_common(1)[0][0] if o.hint_votes else None)
            for o in object_map.objects.values()]
