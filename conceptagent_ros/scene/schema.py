"""The shape of a scene file, checked by pydantic before anything is built from it.

Types, ranges and unknown keys are caught here, and every error names the file, the entry (with
the object's or room's id where it has one) and the field, on one line. What needs the whole scene
to judge (containment, rooms of positions, categories) stays in loader.py.
"""
from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from conceptagent_ros.errors import SceneError

Metres = Annotated[float, Field(allow_inf_nan=False, ge=-1e4, le=1e4)]
Positive = Annotated[float, Field(allow_inf_nan=False, gt=0, le=1e4)]
Probability = Annotated[float, Field(allow_inf_nan=False, ge=0.0, le=1.0)]
def _identifier(value: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,99}", value):
        raise ValueError(f"id '{value[:60]}' must be lower-case letters, digits and '_' (a PDDL name)")
    return value


Identifier = Annotated[StrictStr, AfterValidator(_identifier)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RoomSpec(_Strict):
    id: Identifier
    category: str = "room"
    bounds: tuple[Metres, Metres, Metres, Metres]

    @field_validator("bounds")
    @classmethod
    def _ordered(cls, v: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        if not (v[0] < v[2] and v[1] < v[3]):
            raise ValueError("bounds must be [x_min, y_min, x_max, y_max] with min < max")
        return v


class ObjectSpec(_Strict):
    id: Identifier
    category: Annotated[str, Field(min_length=1, max_length=100)]
    position: Annotated[list[Metres], Field(min_length=2, max_length=3)] | None = None
    inside: Identifier | None = Field(default=None, alias="in")
    room: Identifier | None = None
    affordances: list[str] | None = None
    state: dict[str, StrictBool] = Field(default_factory=dict)
    hidden: StrictBool = False
    # the side a piece of furniture is used from (a fridge's door, a cabinet's front), where the side
    # toward the room's middle is the wrong one (that side faces a counter); a direction of the map
    faces: Literal["+x", "-x", "+y", "-y"] | None = None
    # its full lengths along the map's x and y and its height, where they are not its category's
    # (house_geometry.SIZES): a long counter, a narrow shelf, a sofa along a wall that runs north
    size: tuple[Positive, Positive, Positive] | None = None
    # the edge of its front a hinged door turns on, as seen from the side it is used from (a fridge
    # against a wall to its right opens with its hinge on the right); default right
    hinge: Literal["left", "right"] | None = None
    # what tells it apart from others of its category ("colour: red"): words an instruction may use
    attributes: dict[Annotated[str, Field(min_length=1, max_length=40)],
                     Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[a-z][a-z -]*$")]] = Field(
        default_factory=dict, max_length=16)


class RobotSpec(_Strict):
    start_room: Identifier | None = None
    start: Annotated[list[Metres], Field(min_length=2, max_length=3)] | None = None
    reach: Positive = 1.0
    view_range: Positive = 8.0


class SceneSpec(_Strict):
    name: str | None = None
    description: str = ""
    # household: rooms a mobile robot drives through, seen by its head camera; tabletop: a fixed arm
    # at a table, seen by the arm's cameras (run --body pybullet)
    setting: Literal["household", "tabletop"] = "household"
    robot: RobotSpec = Field(default_factory=RobotSpec)
    failures: dict[str, Probability] = Field(default_factory=dict)
    rooms: Annotated[list[RoomSpec], Field(min_length=1)]
    objects: Annotated[list[ObjectSpec], Field(min_length=1)]

    @model_validator(mode="before")
    @classmethod
    def _mapping(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError("a scene file is a mapping with rooms: and objects:")
        return data


def _where(loc: tuple[Any, ...], data: Any) -> str:
    """objects[3] (apple_1).state.open, from pydantic's location and the raw data."""
    parts: list[str] = []
    node = data
    for item in loc:
        if isinstance(item, int):
            parts[-1] = f"{parts[-1]}[{item}]" if parts else f"[{item}]"
            node = node[item] if isinstance(node, list) and item < len(node) else None
            if isinstance(node, dict) and isinstance(node.get("id"), str):
                parts[-1] += f" ({node['id'][:40]})"
        else:
            parts.append(str(item))
            node = node.get(item) if isinstance(node, dict) else None
    return ".".join(parts) or "(top level)"


def validate_scene(data: Any, source: str) -> SceneSpec:
    try:
        return SceneSpec.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = tuple(x for x in first["loc"] if not (isinstance(x, str) and x.startswith("function-")))
        value = first.get("input")
        shown = "" if isinstance(value, (dict, list)) or value is None else f" (got {str(value)[:60]!r})"
        more = f"; {e.error_count() - 1} more problem(s)" if e.error_count() > 1 else ""
        message = first["msg"].removeprefix("Value error, ")
        raise SceneError(f"{source}: {_where(loc, data)}: {message}{shown}{more}") from None

