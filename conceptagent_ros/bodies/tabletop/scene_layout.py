"""A scene file's tabletop as PyBullet builds it: which of the scene's objects is the table, the
tray, the cabinet and its drawers, and which pybullet_data model stands for each thing the hand
picks up. The same scene file drives the symbolic world (`run --scene tabletop`), so this is the
one place that says how its objects become bodies. Positions are the scene's, in the arm's base
frame; a thing is dropped from a few centimetres above its (x, y) and settles. Seed 0 keeps the
file's layout to the letter; any other seed turns each thing about its vertical and shifts it by up
to JITTER, so that runs over seeds meet each thing in other poses."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from conceptagent_ros.bodies.tabletop.grasp_world import NAMED_OBJECTS, TraySpec
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.scene.model import Scene, SceneObject
from conceptagent_ros.voxposer.tabletop import CABINET_DEPTH, DRAWER_NAMES, CabinetSpec, UrdfObject

DROP_HEIGHT = 0.08
JITTER = 0.02  # metres, each way in x and y, for seeds other than 0
OPEN_DRAWER = 0.10  # how far a drawer the scene says is open stands out
TRAY_INNER = (0.22, 0.16)  # room for two of the named things side by side (the place bench's tray holds one)


class LayoutError(ConceptAgentError):
    """The scene cannot be built on the physical tabletop (and says which object and why)."""


@dataclass(frozen=True)
class TabletopLayout:
    table: str  # the scene id of the table
    things: tuple[UrdfObject, ...]  # each named by its scene id
    tray: TraySpec | None = None
    tray_id: str | None = None
    cabinet: CabinetSpec | None = None
    cabinet_id: str | None = None
    drawers: dict[str, str] = field(default_factory=dict)  # scene id -> the tabletop's link name ("top drawer")

    def scene_id(self, part: str) -> str | None:
        """The scene id of a part as the cameras name it ("table", "tray", "top drawer", "duck_1")."""
        if part == "table":
            return self.table
        if part == "tray":
            return self.tray_id
        if part == "cabinet":
            return self.cabinet_id
        by_link = {link: sid for sid, link in self.drawers.items()}
        if part in by_link:
            return by_link[part]
        return part if any(t.name == part for t in self.things) else None

    def part(self, scene_id: str) -> str | None:
        """The reverse of scene_id: how the cameras name a scene object."""
        if scene_id == self.table:
            return "table"
        if scene_id == self.tray_id:
            return "tray"
        if scene_id == self.cabinet_id:
            return "cabinet"
        if scene_id in self.drawers:
            return self.drawers[scene_id]
        return scene_id if any(t.name == scene_id for t in self.things) else None


def _one(objects: list[SceneObject], what: str, required: bool) -> SceneObject | None:
    if len(objects) > 1:
        raise LayoutError(f"the physical tabletop has one {what}; the scene has {len(objects)} "
                          f"({', '.join(o.id for o in objects)})")
    if required and not objects:
        raise LayoutError(f"the physical tabletop needs a {what} in the scene")
    return objects[0] if objects else None


def tabletop_layout(scene: Scene, seed: int = 0) -> TabletopLayout:
    """The physical tabletop for `scene`, or LayoutError naming what has no physical counterpart."""
    if scene.setting != "tabletop":
        raise LayoutError(f"the physical tabletop is built from a tabletop scene (setting: tabletop); "
                          f"{scene.name!r} is a {scene.setting} (try --scene tabletop)")
    rng = np.random.default_rng(seed)
    objects = list(scene.objects.values())
    table = _one([o for o in objects if o.category == "table"], "table", required=True)
    assert table is not None  # required: _one raised otherwise
    tray = _one([o for o in objects if o.category == "tray"], "tray", required=False)
    cabinet = _one([o for o in objects if o.category == "cabinet"], "cabinet", required=False)
    drawers = sorted((o for o in objects if o.category == "drawer"), key=lambda o: o.position[2])  # bottom first
    if drawers and cabinet is None:
        raise LayoutError(f"drawers ({', '.join(d.id for d in drawers)}) need a cabinet to stand in")
    if cabinet is not None and not drawers:
        raise LayoutError(f"the cabinet {cabinet.id} needs drawers (category drawer, in: {cabinet.id})")
    things = []
    for o in objects:
        if o.category in ("table", "tray", "cabinet", "drawer"):
            continue
        if o.category not in NAMED_OBJECTS:
            raise LayoutError(f"{o.id}: no physical model for a {o.category} on the tabletop; "
                              f"known: {', '.join(sorted(NAMED_OBJECTS))}")
        urdf, scale = NAMED_OBJECTS[o.category]
        x, y, yaw = o.position[0], o.position[1], 0.0
        if seed:
            x, y = x + rng.uniform(-JITTER, JITTER), y + rng.uniform(-JITTER, JITTER)
            yaw = rng.uniform(-np.pi, np.pi)
        turn = (0.0, 0.0, float(np.sin(yaw / 2)), float(np.cos(yaw / 2)))
        things.append(UrdfObject(o.id, urdf, (float(x), float(y), DROP_HEIGHT), turn, scale=scale))
    cabinet_spec = None
    links: dict[str, str] = {}
    if cabinet is not None:
        names = DRAWER_NAMES.get(len(drawers)) or tuple(f"drawer {k + 1}" for k in range(len(drawers)))
        links = {d.id: names[k] for k, d in enumerate(drawers)}
        opening = tuple(OPEN_DRAWER if d.flag("open") else 0.0 for d in drawers)
        cabinet_spec = CabinetSpec(front_x=cabinet.position[0] - CABINET_DEPTH / 2, y=cabinet.position[1],
                                   drawers=len(drawers), opening=opening, handles=True, hollow=True)
    return TabletopLayout(
        table=table.id, things=tuple(things),
        tray=TraySpec(centre=(tray.position[0], tray.position[1]), inner=TRAY_INNER) if tray is not None else None,
        tray_id=tray.id if tray is not None else None, cabinet=cabinet_spec,
        cabinet_id=cabinet.id if cabinet is not None else None, drawers=links)
