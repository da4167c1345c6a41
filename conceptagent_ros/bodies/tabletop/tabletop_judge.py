"""The judge of tasks on the physical tabletop: the goal's atoms as PyBullet's own state has them.

It reads bodies' bounding boxes, the drawers' joints and the fingers' contacts, and nothing the
body's perception or manipulation computed (it shares no code with them):
- (in X tray): X's box centre lies within the tray's inner walls and its bottom below their top;
- (in X drawer): X's box centre lies within the drawer's box (the drawer link's, walls included);
- (in X table): X rests on the table top (bottom within 2 cm of it) and is in neither of those;
- (open D): drawer D's joint stands at least JUDGE_OPEN out;
- (holding X): both fingers touch X and X is off the table.
Other predicates are false here: a goal that needs them cannot be judged on this body.
"""
from __future__ import annotations

import numpy as np

from conceptagent_ros.bodies.tabletop.grasp_world import GraspWorld
from conceptagent_ros.bodies.tabletop.scene_layout import TabletopLayout
from conceptagent_ros.scene.model import Scene
from conceptagent_ros.scene.symbolic import SymbolicState

JUDGE_OPEN = 0.05  # metres out: an open drawer
ON_TABLE = 0.02  # a thing's bottom within this of the table top rests on it
FINGER_LINKS = (9, 10)


def _box(world: GraspWorld, body: int, link: int = -1) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = world.table.p.getAABB(body, link, physicsClientId=world.table.client)
    return np.asarray(lo), np.asarray(hi)


def _within(point: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool:
    return bool(np.all(point >= lo) and np.all(point <= hi))


def physical_state(world: GraspWorld, layout: TabletopLayout, scene: Scene) -> SymbolicState:
    """The atoms in / open / holding that hold in the physical world now."""
    table = world.table
    p, c = table.p, table.client
    atoms: set[tuple[str, ...]] = set()
    drawer_links = {}
    if table.cabinet is not None:
        for sid, link_name in layout.drawers.items():
            link = next(k for (body, k), name in table.names.items() if body == table.cabinet and name == link_name)
            drawer_links[sid] = link
            if table.drawer_opening(link_name) >= JUDGE_OPEN:
                atoms.add(("open", sid))
    for sid, body in table.things.items():
        lo, hi = _box(world, body)
        centre = (lo + hi) / 2
        holder = None
        if layout.tray is not None and layout.tray_id is not None and layout.tray.inside(centre[:2]) \
                and lo[2] < layout.tray.wall_height:
            holder = layout.tray_id
        for drawer, link in drawer_links.items():
            if holder is None and _within(centre, *_box(world, table.cabinet, link)):  # type: ignore[arg-type]
                holder = drawer
        if holder is None and lo[2] <= ON_TABLE:
            holder = layout.table
        if holder is not None:
            atoms.add(("in", sid, holder))
        touching = {int(contact[3]) for contact in p.getContactPoints(table.robot, body, physicsClientId=c)}
        if all(f in touching for f in FINGER_LINKS) and lo[2] > ON_TABLE:
            atoms.add(("holding", sid))
    types = {oid: o.category for oid, o in scene.objects.items()}
    types.update({rid: "room" for rid in scene.rooms})
    return SymbolicState(frozenset(atoms), types)
