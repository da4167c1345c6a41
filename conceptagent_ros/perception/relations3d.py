"""Spatial relations between fused objects, read from their boxes: on, in, near.

The planner's `in` predicate covers both "on" a surface and "inside" a container, so the symbolic
state takes its parent from whichever holds (scene/perceived.py)."""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from conceptagent_ros.perception.geometry import OrientedBox


@dataclass(frozen=True)
class RelationConfig:
    contact: float = 0.06  # metres a thing's bottom may float above a surface's top and be "on" it
    sink: float = 0.015  # metres it may dip below it (noise); deeper, it stands beside it
    footprint_margin: float = 0.05  # metres a thing's centre may stick out over a surface's edge
    near: float = 0.5  # metres between box surfaces (planar) for "near"
    container_ratio: float = 4.0  # a thing is "in" another only if that one is this many times bigger


@dataclass(frozen=True)
class SpatialRelation:
    subject: str
    relation: str  # "on" | "in" | "near"
    object: str


def _in_footprint(point_xy: np.ndarray, box: OrientedBox, margin: float) -> bool:
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    d = point_xy - np.asarray(box.center[:2])
    local = np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1]])
    return bool(np.all(np.abs(local) <= np.asarray(box.extent[:2]) / 2.0 + margin))


def _volume(box: OrientedBox) -> float:
    return box.extent[0] * box.extent[1] * max(box.extent[2], 1e-3)


def _planar_gap(a: OrientedBox, b: OrientedBox) -> float:
    centre_distance = math.hypot(a.center[0] - b.center[0], a.center[1] - b.center[1])
    # each box's half-length along its longer side: exact for boxes facing each other along it
    return centre_distance - 0.5 * (max(a.extent[:2]) + max(b.extent[:2]))


def spatial_relations(boxes: Mapping[str, OrientedBox], config: RelationConfig = RelationConfig()) -> list[SpatialRelation]:
    """Each thing is on or in at most one other: the surface its bottom rests on most closely, or
    the smallest container around it."""
    out: list[SpatialRelation] = []
    ids = sorted(boxes)
    for sid in ids:
        sbox = boxes[sid]
        centre = np.asarray(sbox.center)
        support: tuple[float, float, str, str] | None = None  # (how well it fits, volume, id, relation)
        for oid in ids:
            if oid == sid:
                continue
            obox = boxes[oid]
            if _volume(obox) <= _volume(sbox):
                continue  # only a bigger thing holds or carries a smaller one
            gap = sbox.z_min - obox.z_max
            # resting on it: its bottom at the other's top (not below it: then it stands beside it)
            if -config.sink <= gap <= config.contact and _in_footprint(centre[:2], obox, config.footprint_margin):
                candidate = (abs(gap), _volume(obox), oid, "on")
            elif (_volume(obox) >= config.container_ratio * _volume(sbox) and _in_footprint(centre[:2], obox, 0.0)
                  and obox.z_min - config.contact <= centre[2] <= obox.z_max):
                candidate = (0.0, _volume(obox), oid, "in")
            else:
                continue
            if support is None or candidate[:2] < support[:2]:
                support = candidate
        if support is not None:
            out.append(SpatialRelation(sid, support[3], support[2]))
    held = {(r.subject, r.object) for r in out}
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            if (a, b) in held or (b, a) in held:
                continue
            if _planar_gap(boxes[a], boxes[b]) <= config.near:
                out.append(SpatialRelation(a, "near", b))
    return out


AxisBox = tuple[np.ndarray, np.ndarray]  # (lo, hi) corners of a thing's points, world frame


def smallest_holder(thing: str, boxes: Mapping[str, AxisBox], holders: Iterable[str], margin: float) -> str | None:
    """What a thing stands in or on, read from the axis-aligned boxes of what the camera saw: of the
    `holders` with a larger footprint over which the thing's centre stands, with the thing's bottom
    between the holder's floor and its top (`margin` either way), the one of smallest footprint (in
    the tray, in the open drawer, else on the table). The bodies' cameras see exact points, so the
    margin is theirs to choose for how their things rest."""
    lo, hi = boxes[thing]
    centre, area = (lo + hi) / 2, _footprint(boxes[thing])
    best: tuple[float, str] | None = None
    for other in holders:
        if other == thing or _footprint(boxes[other]) <= area:
            continue
        olo, ohi = boxes[other]
        over = bool(np.all(centre[:2] >= olo[:2]) and np.all(centre[:2] <= ohi[:2]))
        if over and olo[2] - margin <= lo[2] <= ohi[2] + margin and (best is None or _footprint(boxes[other]) < best[0]):
            best = (_footprint(boxes[other]), other)
    return best[1] if best else None


def _footprint(box: AxisBox) -> float:
    return float(np.prod(box[1][:2] - box[0][:2]))
