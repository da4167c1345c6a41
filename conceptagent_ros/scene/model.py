"""The scene as data: rooms, objects with affordances and state, containment and positions.

The same types describe the true world (sim/) and what the robot believes (scene/graph.py).
"""
from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

# Dynamic boolean state an object may carry; affordances are the static predicates.
STATE_KEYS = ("open", "is_on", "heated", "cold", "sliced", "filled", "dirty")
AFFORDANCES = (
    "pickupable", "receptacle", "openable", "toggleable", "sliceable", "slicer",
    "fillable", "water_source", "heater", "cooler", "cleanable",
)


@dataclass
class Room:
    id: str
    category: str
    bounds: tuple[float, float, float, float]  # x_min, y_min, x_max, y_max in metres

    @property
    def centre(self) -> tuple[float, float, float]:
        x0, y0, x1, y1 = self.bounds
        return ((x0 + x1) / 2.0, (y0 + y1) / 2.0, 0.0)

    def contains(self, x: float, y: float) -> bool:
        x0, y0, x1, y1 = self.bounds
        return x0 <= x <= x1 and y0 <= y <= y1


@dataclass
class SceneObject:
    id: str
    category: str
    room: str
    position: tuple[float, float, float]
    affordances: frozenset[str]
    state: dict[str, bool] = field(default_factory=dict)
    parent: str | None = None  # the receptacle this object is in or on
    hidden: bool = False  # tucked away: seen only after the robot searches its receptacle
    attributes: dict[str, str] = field(default_factory=dict)  # {"colour": "red"}: what tells it from its kind
    faces: tuple[float, float] | None = None  # the map direction its front faces, where the scene says it
    size: tuple[float, float, float] | None = None  # full lengths (x, y, z) where the scene says them
    hinge: str | None = None  # "left" or "right": the edge its door turns on, seen from its front

    def has(self, affordance: str) -> bool:
        return affordance in self.affordances

    def flag(self, key: str) -> bool:
        return bool(self.state.get(key, False))


@dataclass
class RobotConfig:
    start_room: str
    start_position: tuple[float, float, float]
    reach: float = 1.0  # metres: what the arm reaches from where the base stands
    view_range: float = 8.0  # metres: what the camera sees in the current room


@dataclass
class Scene:
    name: str
    description: str
    rooms: dict[str, Room]
    objects: dict[str, SceneObject]
    robot: RobotConfig
    failures: dict[str, float] = field(default_factory=dict)  # skill -> probability of a physical failure
    setting: str = "household"  # or "tabletop": a fixed arm at a table (scene/schema.py)

    def copy(self) -> Scene:
        return copy.deepcopy(self)

    def children(self, parent_id: str) -> list[SceneObject]:
        return [o for o in self.objects.values() if o.parent == parent_id]

    def root_of(self, object_id: str) -> SceneObject:
        """The outermost receptacle holding an object (the object itself if it stands free)."""
        return outermost_holder(self.objects, self.objects[object_id])

    def room_at(self, x: float, y: float) -> str | None:
        return room_at(self.rooms, x, y)

    def categories(self) -> set[str]:
        return {o.category for o in self.objects.values()} | {r.category for r in self.rooms.values()}


def distance(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """Planar distance: the base moves in the plane, the arm covers height."""
    return math.hypot(a[0] - b[0], a[1] - b[1])


@dataclass
class RobotState:
    position: tuple[float, float, float]
    room: str
    holding: str | None = None
    reach: float = 1.0


class _Held(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def parent(self) -> str | None: ...


HeldT = TypeVar("HeldT", bound=_Held)


def holders(by_id: Mapping[str, HeldT], obj: HeldT) -> Iterator[HeldT]:
    """What holds `obj`, innermost first, following `parent` through `by_id` (a scene's objects, or
    what perception reports). Cycles stop where they close."""
    seen = {obj.id}
    while obj.parent is not None and obj.parent in by_id and obj.parent not in seen:
        obj = by_id[obj.parent]
        seen.add(obj.id)
        yield obj


def outermost_holder(by_id: Mapping[str, HeldT], obj: HeldT) -> HeldT:
    """What holds `obj` outermost; `obj` itself where nothing known holds it."""
    chain = list(holders(by_id, obj))
    return chain[-1] if chain else obj


def room_at(rooms: Mapping[str, Room], x: float, y: float) -> str | None:
    """The room whose bounds hold (x, y), if any."""
    return next((r.id for r in rooms.values() if r.contains(x, y)), None)
