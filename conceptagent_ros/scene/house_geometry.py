"""Boxes for the embedded household: the world knows where things are (a position, a parent), not
their shape, so the synthetic camera (sim/rgbd_camera.py) renders each object as a box of its
kind's size, furniture standing on the floor and things resting on top of what holds them."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from conceptagent_ros.scene.model import Scene, SceneObject

# Full lengths (x, y, z) in metres by category; others fall back on furniture or item defaults.
SIZES: dict[str, tuple[float, float, float]] = {
    "fridge": (0.7, 0.7, 1.8), "freezer": (0.7, 0.7, 1.8), "countertop": (1.2, 0.6, 0.9), "sink": (0.8, 0.6, 0.9),
    "cabinet": (0.8, 0.5, 0.8), "stove_burner": (0.6, 0.6, 0.9), "drawer": (0.6, 0.5, 0.7), "oven": (0.6, 0.6, 0.9),
    "microwave": (0.5, 0.4, 0.3), "toaster": (0.3, 0.2, 0.2), "coffee_machine": (0.3, 0.3, 0.4),
    "garbage_can": (0.4, 0.4, 0.6), "sofa": (2.0, 0.9, 0.45), "coffee_table": (1.0, 0.6, 0.4),
    "television": (1.2, 0.15, 0.7), "floor_lamp": (0.3, 0.3, 1.6), "shelf": (0.9, 0.4, 1.2), "houseplant": (0.4, 0.4, 0.8),
    "bed": (2.0, 1.5, 0.5), "dresser": (1.0, 0.5, 0.9), "desk": (1.2, 0.6, 0.75), "lamp": (0.2, 0.2, 0.4),
    "laptop": (0.34, 0.24, 0.03), "dining_table": (1.6, 0.9, 0.75), "table": (1.2, 0.8, 0.75), "bathtub": (1.7, 0.8, 0.6),
    "toilet": (0.5, 0.7, 0.45), "washing_machine": (0.6, 0.6, 0.85), "box": (0.3, 0.2, 0.15), "book": (0.2, 0.15, 0.04),
    "newspaper": (0.3, 0.2, 0.02), "plate": (0.25, 0.25, 0.03), "bowl": (0.18, 0.18, 0.08), "pot": (0.25, 0.25, 0.18),
    "pan": (0.28, 0.28, 0.06), "knife": (0.25, 0.04, 0.02), "fork": (0.2, 0.03, 0.02), "spoon": (0.2, 0.04, 0.02),
    "pillow": (0.5, 0.35, 0.15), "remote_control": (0.18, 0.05, 0.03), "keys": (0.08, 0.05, 0.02),
    "credit_card": (0.09, 0.06, 0.01), "cell_phone": (0.15, 0.08, 0.02), "watering_can": (0.3, 0.15, 0.25),
    "bread": (0.25, 0.12, 0.1), "lettuce": (0.15, 0.15, 0.13), "cup": (0.09, 0.09, 0.11), "mug": (0.1, 0.1, 0.11),
}
FURNITURE = (0.8, 0.6, 0.9)
ITEM = (0.12, 0.12, 0.12)


@dataclass(frozen=True)
class Box:
    object_id: str
    category: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    # An open container is drawn without its front panel (this unit vector points out of the
    # missing side, towards the room), so what is inside shows.
    open_front: tuple[float, float] | None = None
    container: bool = False  # things in it stand inside on its floor rather than on its top
    parent: str | None = None  # what it stands on or in
    faces: tuple[float, float] | None = None  # the side it is used from, where its scene says (SceneObject.faces)
    # where a unit stands under this worktop: (x0, y0, x1, y1, height) of the space left open for it,
    # from the floor up (layout's units_under_worktops); the worktop's solid is the rest (solid_parts)
    recesses: tuple[tuple[float, float, float, float, float], ...] = ()
    hung: bool = False  # a wall unit: it hangs on the wall behind it, clear of the floor (layout's hangs)

    @property
    def on_floor(self) -> bool:
        """It stands on the floor (furniture a robot drives around), not on or in something."""
        return self.center[2] - self.size[2] / 2.0 < 0.05

    @property
    def top(self) -> float:
        return self.center[2] + self.size[2] / 2.0

    def footprint_contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        return (abs(x - self.center[0]) <= self.size[0] / 2.0 + margin
                and abs(y - self.center[1]) <= self.size[1] / 2.0 + margin)

    def footprint_contains_all(self, points: np.ndarray, margin: float = 0.0) -> np.ndarray:
        """For (n, 2+) points, which stand within the footprint grown by `margin`."""
        return ((np.abs(points[:, 0] - self.center[0]) <= self.size[0] / 2.0 + margin)
                & (np.abs(points[:, 1] - self.center[1]) <= self.size[1] / 2.0 + margin))


def size_of(obj: SceneObject) -> tuple[float, float, float]:
    if obj.size is not None:
        return obj.size
    if obj.category in SIZES:
        return SIZES[obj.category]
    return ITEM if obj.has("pickupable") else FURNITURE


PANEL = 0.03  # metres: wall thickness of containers
# A container this tall (a fridge, a freezer) has a shelf, and what is in it stands on the shelf: a
# fridge's floor is 3 cm above the ground, which no arm reaches into from outside, and a real one's
# middle shelf is where a hand puts things in
TALL_CONTAINER = 1.2
SHELF_TOP = 0.8  # metres above a tall container's bottom: its shelf's upper face


SLIDING = ("drawer", "dresser")  # categories that open by sliding out; every other container has a door
# A chest of drawers is a stack of drawers, and what is in it lies in the top one: a drawer as deep
# as the chest is tall, opened 10 cm, kept what lay on its floor out of every camera's sight and
# out of the hand's reach (the evaluation houses' spatulas and knives). The lower drawers stay shut.
TOP_DRAWER = 0.15  # metres: the height of a chest's top drawer (its floor 12 cm under its front's top edge)


# A cabinet or a chest of drawers that the scene puts where a kitchen counter or a sink stands, and
# lower than its top, is a base unit under it, as in a fitted kitchen: its front just behind the
# worktop's edge, the worktop's top over it (not a counter standing before the unit's door, which
# no one could open: the studio kitchen's cabinet and the apartment's under the sink were exported so)
WORKTOPS = ("countertop", "sink")
UNDER_INSET = 0.02  # metres a unit's front stands back from the edge of the worktop over it
UNDER_GAP = 0.01  # metres between a unit's top and the underside of the worktop over it
WORKTOP_SLAB = 0.04  # metres: the thinnest a worktop's top over a unit is


# A piece of furniture whose scene height puts its bottom this high (above any worktop) is a wall
# unit, hung on the wall behind it as a kitchen's or a bathroom's wall cabinet is: stood on the floor,
# the family house's wall cabinet stood behind the counter under it and its door met the counter
WALL_UNIT_BOTTOM = 1.0  # metres
WALL_GAP = 0.35  # metres: a wall unit the scene puts this close to a wall hangs on it


def hangs(obj: SceneObject) -> bool:
    """The scene puts this piece of furniture on the wall, its bottom WALL_UNIT_BOTTOM up or higher."""
    return (obj.parent is None and not obj.has("pickupable")
            and obj.position[2] - size_of(obj)[2] / 2.0 >= WALL_UNIT_BOTTOM)


def units_under_worktops(scene: Scene) -> dict[str, str]:
    """Which unit stands under which worktop: each floor-standing container (a thing that opens and
    holds things) that is lower than a worktop by WORKTOP_SLAB at least, whose footprint the scene
    puts over the worktop's, and which the scene does not put above it (a wall cabinet's height),
    under the worktop it overlaps most."""
    tops = [o for _, o in sorted(scene.objects.items())
            if o.parent is None and o.category in WORKTOPS and not o.has("pickupable")]
    under: dict[str, str] = {}
    for oid, obj in sorted(scene.objects.items()):
        if obj.parent is not None or obj.has("pickupable") or obj.category in WORKTOPS \
                or not (obj.has("openable") and obj.has("receptacle")):
            continue
        size = size_of(obj)
        best: tuple[float, str] | None = None
        for top in tops:
            top_size = size_of(top)
            if size[2] + UNDER_GAP + WORKTOP_SLAB > top_size[2] or obj.position[2] > top_size[2]:
                continue
            over_x = (size[0] + top_size[0]) / 2 - abs(obj.position[0] - top.position[0])
            over_y = (size[1] + top_size[1]) / 2 - abs(obj.position[1] - top.position[1])
            if over_x > 0 and over_y > 0 and (best is None or over_x * over_y > best[0]):
                best = (over_x * over_y, top.id)
        if best is not None:
            under[oid] = best[1]
    return under


def solid_parts(box: Box) -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
    """The box as solid boxes (centre, size): itself, or for a worktop with units under it, its top
    over the whole footprint and, below it, the footprint less the spaces left for the units, its
    front as far back as theirs (only the top overhangs: a hand that closes on a handle beside a
    unit's edge meets no face standing out before the unit's)."""
    if not box.recesses:
        return [(box.center, box.size)]
    (cx, cy, cz), (sx, sy, sz) = box.center, box.size
    x0, y0, z0 = cx - sx / 2, cy - sy / 2, cz - sz / 2
    x1, y1 = cx + sx / 2, cy + sy / 2
    under = min(max(r[4] for r in box.recesses), z0 + sz - WORKTOP_SLAB)
    parts = [((cx, cy, (under + z0 + sz) / 2), (sx, sy, z0 + sz - under))]
    # the sides the units open to (their spaces reach the box's edge there) stand back by UNDER_INSET
    x0 += UNDER_INSET * any(abs(r[0] - x0) < 1e-6 for r in box.recesses)
    x1 -= UNDER_INSET * any(abs(r[2] - x1) < 1e-6 for r in box.recesses)
    y0 += UNDER_INSET * any(abs(r[1] - y0) < 1e-6 for r in box.recesses)
    y1 -= UNDER_INSET * any(abs(r[3] - y1) < 1e-6 for r in box.recesses)
    xs = sorted({x0, x1, *(min(max(v, x0), x1) for r in box.recesses for v in (r[0], r[2]))})
    ys = sorted({y0, y1, *(min(max(v, y0), y1) for r in box.recesses for v in (r[1], r[3]))})
    for a, b in zip(xs, xs[1:]):
        for c, d in zip(ys, ys[1:]):
            if b - a < 1e-6 or d - c < 1e-6:
                continue
            mx, my = (a + b) / 2, (c + d) / 2
            floor = max([r[4] for r in box.recesses if r[0] <= mx <= r[2] and r[1] <= my <= r[3]], default=z0)
            if under - floor > 1e-6:
                parts.append(((mx, my, (floor + under) / 2), (b - a, d - c, under - floor)))
    return parts


def has_shelf(size: tuple[float, float, float]) -> bool:
    return size[2] >= TALL_CONTAINER


def top_drawer_height(size: tuple[float, float, float]) -> float:
    return min(TOP_DRAWER, size[2])


def inner_floor(holder: Box) -> float:
    """Where the things in a container stand: its shelf's upper face, its top drawer's floor (a
    chest of drawers), or its floor panel's."""
    bottom = holder.center[2] - holder.size[2] / 2.0
    if holder.category in SLIDING:
        return bottom + holder.size[2] - top_drawer_height(holder.size) + PANEL
    return bottom + (SHELF_TOP if has_shelf(holder.size) else PANEL)


def facing(dx: float, dy: float, size: tuple[float, float, float]) -> tuple[float, float]:
    """The side of a piece of furniture that faces the room, given the way (dx, dy) to the room's
    middle: one of its long sides (a shelf, a counter, a sofa is used from there), the one towards
    the middle; for a square thing (a fridge), whichever side looks most towards the middle."""
    if max(size[0], size[1]) >= 1.3 * min(size[0], size[1]):
        if size[0] > size[1]:  # long along x: the front faces +y or -y
            return (0.0, 1.0 if dy >= 0 else -1.0)
        return (1.0 if dx >= 0 else -1.0, 0.0)
    return (1.0 if dx >= 0 else -1.0, 0.0) if abs(dx) >= abs(dy) else (0.0, 1.0 if dy >= 0 else -1.0)


def front_of(obj: SceneObject, x: float, y: float, scene: Scene, size: tuple[float, float, float]) -> tuple[float, float]:
    """The side a piece of furniture faces: where the scene says (`faces`), else toward its room's middle."""
    if obj.faces is not None:
        return obj.faces
    cx, cy, _ = scene.rooms[obj.room].centre if obj.room in scene.rooms else (x, y, 0.0)
    return facing(cx - x, cy - y, size)


def layout(scene: Scene, object_ids: set[str] | None = None, previous: dict[str, Box] | None = None) -> dict[str, Box]:
    """Boxes of the scene's objects (all, or those named). Things on a surface sit on its top,
    things in a container (anything that opens) on its floor, in a row across the side that faces
    the room, in id order, so that the same state always gives the same picture. Furniture that
    the scene puts where other furniture stands (a cabinet under the sink) is moved out in front of
    it, towards the middle of the room.

    With `previous` (the last layout), things that stayed where they were keep their place, and a
    thing put somewhere takes a free spot there: putting a pillow on a bed moves no other pillow."""
    boxes: dict[str, Box] = {}
    under = units_under_worktops(scene)

    def kept(oid: str) -> Box | None:
        if previous is None or oid not in previous:
            return None
        old, obj = previous[oid], scene.objects[oid]
        if old.parent != obj.parent or obj.parent is None:
            return None
        holder_before = previous.get(obj.parent)
        if holder_before is None or place(obj.parent).center != holder_before.center:
            return None
        container = obj.has("openable") and obj.has("receptacle")
        front = front_of(obj, old.center[0], old.center[1], scene, old.size) if container and obj.flag("open") else None
        return Box(oid, old.category, old.center, old.size, front, container, old.parent, old.faces)

    def floor_pieces() -> list[Box]:
        return [b for b in sorted(boxes.values(), key=lambda b: b.object_id) if b.on_floor]

    def nominal_floor_pieces(than: str) -> list[tuple[tuple[float, float], tuple[float, float, float]]]:
        """Where the scene puts the furniture not placed yet: a piece moved aside does not take its spot."""
        return [((o.position[0], o.position[1]), size_of(o)) for oid, o in sorted(scene.objects.items())
                if oid != than and oid not in boxes and oid not in under and o.parent is None
                and not o.has("pickupable") and not hangs(o)]

    def fits(x: float, y: float, size: tuple[float, float, float], room_id: str, oid: str = "") -> bool:
        """Inside its room, clear of every piece already standing on the floor and of where the
        scene puts the pieces still to come."""
        room = scene.rooms.get(room_id)
        if room is not None:
            x0, y0, x1, y1 = room.bounds
            if not (x0 + size[0] / 2 - 1e-9 <= x <= x1 - size[0] / 2 + 1e-9 and
                    y0 + size[1] / 2 - 1e-9 <= y <= y1 - size[1] / 2 + 1e-9):
                return False
        taken = [((b.center[0], b.center[1]), b.size) for b in floor_pieces()] + nominal_floor_pieces(oid)
        return all((size[0] + other[0]) / 2 + 0.02 <= abs(x - centre[0]) or
                   (size[1] + other[1]) / 2 + 0.02 <= abs(y - centre[1]) for centre, other in taken)

    def clear_of_furniture(box: Box, obj: SceneObject) -> Box:
        x, y, z = box.center
        fx, fy = front_of(obj, x, y, scene, box.size)
        for other in floor_pieces():
            overlap_x = (box.size[0] + other.size[0]) / 2 - abs(x - other.center[0])
            overlap_y = (box.size[1] + other.size[1]) / 2 - abs(y - other.center[1])
            if overlap_x > 0 and overlap_y > 0:
                # beside the other piece along the wall, with a gap a camera can see, where there is room
                # (both stay reachable from the room); else out in front of it, also when the scene put
                # this one behind the other's middle (a drawer at the back of a counter)
                gap_x = (box.size[0] + other.size[0]) / 2 + 0.06
                gap_y = (box.size[1] + other.size[1]) / 2 + 0.06
                beside = [(other.center[0] + side * gap_x, y) for side in (-1, 1)] if fy else \
                    [(x, other.center[1] + side * gap_y) for side in (-1, 1)]
                beside.sort(key=lambda c: abs(c[0] - x) + abs(c[1] - y))
                spot = next((c for c in beside if fits(c[0], c[1], box.size, obj.room, obj.id)), None)
                if spot is not None:
                    x, y = spot
                elif fx:
                    x = other.center[0] + fx * gap_x
                else:
                    y = other.center[1] + fy * gap_y
        return replace(box, center=(x, y, z))

    def inside_room(box: Box, obj: SceneObject) -> Box:
        """Furniture stands within its room: a wall runs along the room's bounds (world/floor_plan)."""
        room = scene.rooms.get(obj.room)
        if room is None:
            return box
        x0, y0, x1, y1 = room.bounds
        x, y, z = box.center
        hx, hy = box.size[0] / 2.0, box.size[1] / 2.0
        if x1 - x0 >= 2 * hx:
            x = min(max(x, x0 + hx), x1 - hx)
        if y1 - y0 >= 2 * hy:
            y = min(max(y, y0 + hy), y1 - hy)
        return replace(box, center=(x, y, z))

    def on_the_wall(box: Box, obj: SceneObject) -> Box:
        """A wall unit within its room, its back against the wall behind it where the scene puts it
        near one (WALL_GAP); over what stands on the floor, which it does not move."""
        box = inside_room(box, obj)
        room = scene.rooms.get(obj.room)
        if room is None:
            return box
        fx, fy = box.faces or front_of(obj, box.center[0], box.center[1], scene, box.size)
        x, y, z = box.center
        x0, y0, x1, y1 = room.bounds
        if fx and abs((x0 if fx > 0 else x1) - (x - fx * box.size[0] / 2.0)) <= WALL_GAP:
            x = (x0 if fx > 0 else x1) + fx * box.size[0] / 2.0
        elif fy and abs((y0 if fy > 0 else y1) - (y - fy * box.size[1] / 2.0)) <= WALL_GAP:
            y = (y0 if fy > 0 else y1) + fy * box.size[1] / 2.0
        return replace(box, center=(x, y, z))

    def under_worktop(obj: SceneObject, front: tuple[float, float] | None) -> Box | None:
        """The unit's box under its worktop (front just behind the worktop's edge, within its span,
        no deeper or taller than it leaves room for), and the worktop's space left open for it;
        None where another unit under the same worktop already stands there."""
        top = place(under[obj.id])
        fx, fy = front_of(scene.objects[top.object_id], top.center[0], top.center[1], scene, top.size)
        along, across = (0, 1) if fx == 0 else (1, 0)
        out = fy if fx == 0 else fx
        size = list(size_of(obj))
        size[along] = min(size[along], top.size[along])
        size[across] = min(size[across], top.size[across] - UNDER_INSET)
        size[2] = min(size[2], top.top - WORKTOP_SLAB - UNDER_GAP)
        centre = [0.0, 0.0, size[2] / 2.0]
        half = (top.size[along] - size[along]) / 2
        centre[along] = min(max(obj.position[along], top.center[along] - half), top.center[along] + half)
        edge = top.center[across] + out * top.size[across] / 2
        centre[across] = edge - out * (UNDER_INSET + size[across] / 2)
        box = Box(obj.id, obj.category, (centre[0], centre[1], centre[2]), (size[0], size[1], size[2]),
                  None if front is None else (fx, fy), True, faces=(fx, fy))
        lo = [centre[0] - size[0] / 2, centre[1] - size[1] / 2]
        hi = [centre[0] + size[0] / 2, centre[1] + size[1] / 2]
        for other in top.recesses:
            if other[0] < hi[0] - 1e-6 and lo[0] < other[2] - 1e-6 and other[1] < hi[1] - 1e-6 and lo[1] < other[3] - 1e-6:
                return None
        # open from the unit's back to the worktop's edge: nothing of the worktop before the unit's door
        (lo if out < 0 else hi)[across] = edge
        boxes[top.object_id] = replace(top, recesses=top.recesses + ((lo[0], lo[1], hi[0], hi[1],
                                                                     size[2] + UNDER_GAP),))
        return box

    def place(oid: str, trail: frozenset[str] = frozenset()) -> Box:
        if oid in boxes:
            return boxes[oid]
        still = kept(oid)
        if still is not None:
            boxes[oid] = still
            return still
        obj = scene.objects[oid]
        sx, sy, sz = size_of(obj)
        parent = obj.parent if obj.parent in scene.objects and obj.parent not in trail else None
        container = obj.has("openable") and obj.has("receptacle")
        front = front_of(obj, obj.position[0], obj.position[1], scene, (sx, sy, sz)) \
            if container and obj.flag("open") else None
        unit = under_worktop(obj, front) if parent is None and oid in under else None
        if unit is not None:
            box = unit
        elif parent is None and hangs(obj):
            box = on_the_wall(Box(oid, obj.category, (obj.position[0], obj.position[1], obj.position[2]), (sx, sy, sz),
                                  front, container, faces=obj.faces, hung=True), obj)
        elif parent is None:
            box = Box(oid, obj.category, (obj.position[0], obj.position[1], sz / 2.0), (sx, sy, sz), front, container,
                      faces=obj.faces)
            if not obj.has("pickupable"):
                box = inside_room(clear_of_furniture(box, obj), obj)
        else:
            holder = place(parent, trail | {oid})
            siblings = sorted(c.id for c in scene.children(parent))
            slot, count = siblings.index(oid), len(siblings)
            toward_front = (0.0, 0.0)
            if not scene.objects[parent].has("pickupable"):
                # a row across the side that faces the room (a container's opening), so that from
                # there nothing hides behind anything
                fx, fy = holder.faces or front_of(scene.objects[parent], holder.center[0], holder.center[1], scene,
                                                  holder.size)
                along_x = fx == 0
                if holder.category in SLIDING:  # in the drawer's front half, which its opening uncovers
                    toward_front = (fx, fy)
            else:
                along_x = holder.size[0] >= holder.size[1]
            length = holder.size[0] if along_x else holder.size[1]
            wall = PANEL + 0.005 if holder.container else 0.0
            depth = (holder.size[1] if along_x else holder.size[0]) - 2 * wall
            along, across = (sx, sy) if along_x else (sy, sx)
            if count > 1 and along > length / count + 1e-9 and across < along <= depth:
                # a long thing too long for its place in a crowded row lies across it (a knife among cutlery)
                sx, sy = sy, sx
                along, across = across, along
            offset = (slot + 0.5) / count * length - length / 2.0 if count > 1 else 0.0
            if previous is not None and count > 1:
                offset = _free_offset(holder, along_x, length, along,
                                      [boxes[c] for c in siblings if c in boxes and c != oid], count) or offset
            end = max(0.0, length / 2.0 - max(0.06, min(along, length - 2 * wall) / 2.0 + wall))
            offset = max(-end, min(end, offset))  # within the holder, clear of a container's walls
            forward = max(0.0, min(depth / 4.0, (depth - across) / 2.0))
            cx, cy = holder.center[0] + toward_front[0] * forward, holder.center[1] + toward_front[1] * forward
            x, y = (cx + offset, cy) if along_x else (cx, cy + offset)
            # Squeeze things that would overhang a small holder (a card in a box)
            sx, sy = min(sx, holder.size[0] - 2 * PANEL), min(sy, holder.size[1] - 2 * PANEL)
            if holder.container:
                floor = inner_floor(holder)
                sz = min(sz, holder.center[2] + holder.size[2] / 2.0 - PANEL - floor - 0.01)
                z = floor + sz / 2.0 + 0.002
            else:
                z = holder.top + sz / 2.0 + 0.002
            box = Box(oid, obj.category, (x, y, z), (sx, sy, sz), front, container, parent)
        boxes[oid] = box
        return box

    # Furniture first, in id order, so where a piece stands never depends on what things lie on it
    for oid in sorted(scene.objects):
        obj = scene.objects[oid]
        if obj.parent is None and not obj.has("pickupable"):
            place(oid)
    # Things that stay where they were first, so that an arrival sees which spots are taken
    for oid in sorted(scene.objects, key=lambda o: (previous is None or o not in previous
                                                    or previous[o].parent != scene.objects[o].parent, o)):
        place(oid)
    wanted = set(scene.objects) if object_ids is None else set(object_ids)
    return {oid: box for oid, box in boxes.items() if oid in wanted}


def _free_offset(holder: Box, along_x: bool, length: float, width: float, taken: list[Box], count: int) -> float | None:
    """The middle of the widest stretch of the holder's row that no other thing on it covers."""
    axis = 0 if along_x else 1
    offsets = [(b.center[axis] - holder.center[axis], b.size[axis] / 2) for b in taken]
    spans = sorted((middle - half, middle + half) for middle, half in offsets)
    edges = [-length / 2.0] + [v for span in spans for v in span] + [length / 2.0]
    gaps = [(edges[i + 1] - edges[i], (edges[i] + edges[i + 1]) / 2.0) for i in range(0, len(edges), 2)]
    widest, middle = max(gaps)
    return middle if widest > 0 else None


def free_station(robot_xy: tuple[float, float], room_bounds: tuple[float, float, float, float],
                 furniture: list[Box], clearance: float = 0.3) -> tuple[float, float]:
    """Where a camera on the robot can stand: the world puts the robot on an object's centre when it
    navigates there; step out of every box, along the way to the room's middle where that is free,
    else to the nearest free spot around."""
    x0, y0, x1, y1 = room_bounds
    centre = ((x0 + x1) / 2.0, (y0 + y1) / 2.0)

    holder = next((b for b in furniture if b.footprint_contains(*robot_xy)), None)

    def free(x: float, y: float) -> bool:
        # clear of the thing it works on by `clearance`, and merely outside the others (a mast is thin)
        inside_room = x0 + clearance <= x <= x1 - clearance and y0 + clearance <= y <= y1 - clearance
        return inside_room and not any(b.footprint_contains(x, y, clearance if b is holder else 0.05) for b in furniture)

    if free(*robot_xy):
        return robot_xy
    # Stand in front of the thing the robot drove up to (its side that faces the middle of the room,
    # where an open container shows its inside), else back away towards the middle of the room
    directions = []
    if holder is not None:
        directions.append(holder.open_front or holder.faces
                          or facing(centre[0] - holder.center[0], centre[1] - holder.center[1], holder.size))
    dx, dy = centre[0] - robot_xy[0], centre[1] - robot_xy[1]
    if math.hypot(dx, dy) > 1e-6:
        directions.append((dx / math.hypot(dx, dy), dy / math.hypot(dx, dy)))
    for ux, uy in directions:
        for step in range(1, 31):
            x, y = robot_xy[0] + ux * 0.1 * step, robot_xy[1] + uy * 0.1 * step
            if free(x, y):
                return x, y
    best: tuple[float, float, float] | None = None
    for radius in (0.3, 0.5, 0.7, 0.9, 1.2, 1.5, 2.0, 2.5, 3.0):
        for k in range(24):
            a = 2 * math.pi * k / 24
            x, y = robot_xy[0] + radius * math.cos(a), robot_xy[1] + radius * math.sin(a)
            if free(x, y):
                d = math.hypot(x - centre[0], y - centre[1])
                if best is None or d < best[2]:
                    best = (x, y, d)
        if best is not None:
            return best[0], best[1]
    return centre
