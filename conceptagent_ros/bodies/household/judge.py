"""The judge of household tasks on the physical body: the goal's atoms as PyBullet's own state has
them. It reads bodies' and links' bounding boxes, the doors' and drawers' joints and the fingers'
contacts, and nothing the body perceived or planned (it shares no code with the body, the planners
or the executors):
- (in X C), C a container with a door or a drawer: X's box centre lies inside C's carcass box (a
  drawer's: inside the drawer link's box);
- (in X C), C a thing that holds things (a bowl, a pan): X's centre lies over C's footprint and X's
  bottom between C's bottom and its top;
- (in X F), F furniture (a counter, a table, a shelf, a sink): X's centre lies over F's footprint and
  X's bottom within ON_TOP of F's top (a shelf's top: the shelf is drawn as one block);
- (open C): C's hinge turned at least JUDGE_DOOR_OPEN, or its drawer out at least JUDGE_DRAWER_OPEN;
- (holding X): both fingers touch X; (hand_empty): they touch nothing that can be picked up.
Predicates no physical quantity stands for (is_on, sliced, filled, ...) are not judged here: they are
the body's symbolic flags, which the skills without a physical model set (bodies/household/body.py).
`symbolic_effects` lists them apart, and a task whose goal needs one is reported apart from the
physical figure (evaluation/bench.py), so no physical success is counted on a flag.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from conceptagent_ros.scene.model import Scene
from conceptagent_ros.scene.symbolic import SymbolicState

ON_TOP = 0.03  # metres between a thing's bottom and a surface's top: it rests on it
JUDGE_DOOR_OPEN = 0.5  # radians
JUDGE_DRAWER_OPEN = 0.05  # metres
FINGERS = ("left_finger", "right_finger")
PHYSICAL_PREDICATES = frozenset({"in", "open", "holding", "hand_empty"})  # what this judge reads from PyBullet


def _aabb(p: Any, client: int, body: int, link: int = -1) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = p.getAABB(body, link, physicsClientId=client)
    return np.asarray(lo), np.asarray(hi)


def _links(p: Any, client: int, body: int) -> dict[str, int]:
    return {p.getJointInfo(body, j, physicsClientId=client)[12].decode(): j
            for j in range(p.getNumJoints(body, physicsClientId=client))}


def physical_household_state(p: Any, client: int, bodies: Mapping[str, int], robot: int, scene: Scene) -> SymbolicState:
    """The physical predicates (PHYSICAL_PREDICATES) as PyBullet has them now."""
    atoms: set[tuple[str, ...]] = set()
    boxes = {name: _aabb(p, client, body) for name, body in bodies.items() if name in scene.objects}
    articulated: dict[str, tuple[str, int, tuple[np.ndarray, np.ndarray]]] = {}
    for name, body in bodies.items():
        if name not in scene.objects or p.getNumJoints(body, physicsClientId=client) == 0:
            continue
        links = _links(p, client, body)
        joint = next(iter(links.values()))
        kind = "drawer" if "drawer" in links else "door"
        inside = _aabb(p, client, body, links["drawer"]) if kind == "drawer" else _aabb(p, client, body, -1)
        articulated[name] = (kind, joint, inside)
        position = p.getJointState(body, joint, physicsClientId=client)[0]
        if (kind == "door" and abs(position) >= JUDGE_DOOR_OPEN) or (kind == "drawer" and position >= JUDGE_DRAWER_OPEN):
            atoms.add(("open", name))
    finger_links = {j for name, j in _links(p, client, robot).items() if name in FINGERS}
    for name, (lo, hi) in boxes.items():
        obj = scene.objects[name]
        if not obj.has("pickupable"):
            continue
        centre = (lo + hi) / 2
        holder: tuple[float, str] | None = None
        for other, (olo, ohi) in boxes.items():
            if other == name or not scene.objects[other].has("receptacle"):
                continue
            over = bool(np.all(centre[:2] >= olo[:2]) and np.all(centre[:2] <= ohi[:2]))
            if other in articulated:
                _, _, (ilo, ihi) = articulated[other]
                held_in = bool(np.all(centre >= ilo) and np.all(centre <= ihi))
            elif scene.objects[other].has("pickupable"):  # a bowl, a pan: a thing that holds things
                held_in = over and olo[2] - 0.01 <= lo[2] <= ohi[2]
            else:
                held_in = over and abs(lo[2] - ohi[2]) <= ON_TOP
            area = float(np.prod(ohi[:2] - olo[:2]))
            if held_in and (holder is None or area < holder[0]):
                holder = (area, other)
        if holder is not None:
            atoms.add(("in", name, holder[1]))
        touching = {int(c[3]) for c in p.getContactPoints(robot, bodies[name], physicsClientId=client)}
        if finger_links and finger_links <= touching:
            atoms.add(("holding", name))
    if not any(atom[0] == "holding" for atom in atoms):
        atoms.add(("hand_empty",))
    types = {oid: o.category for oid, o in scene.objects.items()}
    types.update({rid: "room" for rid in scene.rooms})
    return SymbolicState(frozenset(atoms), types)


def symbolic_effects(flags: Mapping[str, Mapping[str, bool]]) -> frozenset[tuple[str, ...]]:
    """The atoms the body's flags hold for predicates no physical quantity stands for: declared
    effects of skills with no physical model, not judged on PyBullet's state."""
    return frozenset((key, oid) for oid, state in flags.items() for key, value in state.items()
                     if value and key not in PHYSICAL_PREDICATES)
