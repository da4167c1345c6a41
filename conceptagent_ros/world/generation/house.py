"""One generated house from its seed: the plan, the rooms, the furniture, the things and the easy
tasks, drawn again (a new draw from the same seed) until the house passes the checks a real home
passes: every room reached through a doorway a robot fits through, and no piece standing where
another stands (scene/house_geometry.layout keeps every piece where it was put)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from conceptagent_ros.errors import SceneError
from conceptagent_ros.scene.model import Room
from conceptagent_ros.world.generation.floor_plans import RoomCut, cut_rooms
from conceptagent_ros.world.generation.furnishing import Piece, Rect, furnish_room
from conceptagent_ros.world.generation.rules import HouseRules, load_rules
from conceptagent_ros.world.generation.stocking import stock
from conceptagent_ros.world.generation.tasks import easy_tasks

ATTEMPTS = 200  # draws per seed before giving up (a house passes in a few)
ROBOT_DOOR = 0.8  # metres: the narrowest doorway the robot (0.44 m across) is counted through
DOOR_KEEP_OUT = 0.7  # metres either side of a doorway's middle, along its wall, kept free of furniture
PASSAGE_KEEP_OUT = 1.1  # metres into each room before a doorway kept free
START_CLEARANCE = 0.5  # metres from the robot's start to any piece or wall


@dataclass
class GeneratedHouse:
    seed: int
    name: str
    scene: dict[str, Any]
    tasks: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 1


def _door_zones(cuts: list[RoomCut]) -> list[Rect]:
    """Where each doorway will be (the middle of the edge two rooms share, world/floor_plan) and
    the passage through it, kept free of furniture."""
    from conceptagent_ros.world.floor_plan import meeting_edges

    zones: list[Rect] = []
    rooms = [Room(f"r{i}", c.category, c.bounds) for i, c in enumerate(cuts)]
    for _, _, (axis, coordinate, lo, hi) in meeting_edges(rooms):
        middle = (lo + hi) / 2
        if axis == 0:
            zones.append(Rect(middle - DOOR_KEEP_OUT, coordinate - PASSAGE_KEEP_OUT, middle + DOOR_KEEP_OUT,
                              coordinate + PASSAGE_KEEP_OUT))
        else:
            zones.append(Rect(coordinate - PASSAGE_KEEP_OUT, middle - DOOR_KEEP_OUT, coordinate + PASSAGE_KEEP_OUT,
                              middle + DOOR_KEEP_OUT))
    return zones


def _start(bounds: tuple[float, float, float, float], pieces: list[Piece]) -> tuple[float, float] | None:
    """The spot in the room farthest from its walls and pieces, if START_CLEARANCE clear."""
    x0, y0, x1, y1 = bounds
    best: tuple[float, float, float] | None = None
    for x in np.arange(x0 + 0.3, x1 - 0.3, 0.1):
        for y in np.arange(y0 + 0.3, y1 - 0.3, 0.1):
            clear = min(x - x0, x1 - x, y - y0, y1 - y)
            for p in pieces:
                f = p.footprint
                dx, dy = max(f.x0 - x, 0.0, x - f.x1), max(f.y0 - y, 0.0, y - f.y1)
                clear = min(clear, math.hypot(dx, dy))
            if best is None or clear > best[2] + 1e-9:
                best = (float(x), float(y), clear)
    if best is None or best[2] < START_CLEARANCE:
        return None
    return round(best[0], 2), round(best[1], 2)


def draw_plan(seed: int, rules: HouseRules) -> list[str]:
    """The seed's room plan, drawn once by weight: a plan that is hard to fit is redrawn in its
    geometry, never swapped for another, so the plans come as often as their weights say."""
    rng = np.random.default_rng([seed])
    weights = np.array([w for _, w in rules.plans])
    return list(rules.plans[int(rng.choice(len(rules.plans), p=weights / weights.sum()))][0])


def _draw(seed: int, attempt: int, plan: list[str], rules: HouseRules, tasks_per_house: int) -> GeneratedHouse | None:
    rng = np.random.default_rng([seed, attempt + 1])
    # the kitchen and the rooms beside it in a random order: which rooms meet changes from house to house
    order = [plan[i] for i in rng.permutation(len(plan))]
    cuts = cut_rooms([(c, float(rng.uniform(*rules.rooms[c].area))) for c in order], rng)
    if cuts is None:
        return None
    keep_out = _door_zones(cuts)
    room_ids: dict[str, int] = {}
    rooms: list[dict[str, Any]] = []
    pieces: list[Piece] = []
    for cut in cuts:
        room_ids[cut.category] = room_ids.get(cut.category, 0) + 1
        room_id = f"{cut.category}_{room_ids[cut.category]}"
        rooms.append({"id": room_id, "category": cut.category, "bounds": [round(v, 2) for v in cut.bounds]})
        furnished = furnish_room(room_id, cut.bounds, rules.rooms[cut.category], keep_out, rng)
        if furnished is None:
            return None
        pieces += furnished
    ids: dict[str, int] = {}
    objects: list[dict[str, Any]] = []
    holders: list[tuple[str, str, str]] = []
    room_kind = {r["id"]: r["category"] for r in rooms}
    for piece in pieces:
        ids[piece.category] = ids.get(piece.category, 0) + 1
        oid = f"{piece.category}_{ids[piece.category]}"
        f = piece.footprint
        entry: dict[str, Any] = {"id": oid, "category": piece.category,
                                 "position": [round((f.x0 + f.x1) / 2, 3), round((f.y0 + f.y1) / 2, 3), 0.0],
                                 "size": [round(f.x1 - f.x0, 3), round(f.y1 - f.y0, 3), piece.height]}
        if piece.faces is not None:
            entry["faces"] = piece.faces
        if piece.hinge is not None:
            entry["hinge"] = piece.hinge
        objects.append(entry)
        holders.append((oid, piece.category, room_kind[piece.room]))
    objects += [{"id": t.id, "category": t.category, "in": t.holder} for t in stock(holders, rules, rng, ids)]
    start_room = next((r for r in rooms if r["category"] == "living_room"), rooms[0])
    start = _start(tuple(start_room["bounds"]), [p for p in pieces if p.room == start_room["id"]])
    if start is None:
        return None
    name = f"house_{seed}"
    scene = {"name": name,
             "description": f"A generated house (seed {seed}): " + ", ".join(r["category"].replace("_", " ")
                                                                               for r in rooms) + ".",
             "robot": {"start_room": start_room["id"], "start": list(start), "reach": 1.0, "view_range": 8.0},
             "rooms": rooms, "objects": objects}
    tasks = easy_tasks(name, f"{name}.yaml", objects, rules, rng, tasks_per_house)
    return GeneratedHouse(seed, name, scene, tasks, attempt + 1)


def check_house(scene_data: dict[str, Any]) -> str | None:
    """Why the house is not one a robot can live in, or None: it loads, every piece stands where it
    was put, and every room is reached through doorways the robot fits through."""
    from conceptagent_ros.scene.house_geometry import layout
    from conceptagent_ros.scene.loader import scene_from_dict
    from conceptagent_ros.world.floor_plan import doorways

    scene = scene_from_dict(scene_data, source=scene_data.get("name", "<generated>"))
    boxes = layout(scene)
    for o in scene_data["objects"]:
        if "position" in o:
            box = boxes[o["id"]]
            if abs(box.center[0] - o["position"][0]) > 1e-6 or abs(box.center[1] - o["position"][1]) > 1e-6:
                return f"{o['id']} was moved from where it was put"
    furniture = [b for b in boxes.values() if b.on_floor]
    reached = {next(iter(scene.rooms))}
    doors = [d for d in doorways(scene, furniture) if d.width >= ROBOT_DOOR]
    grew = True
    while grew:
        grew = False
        for d in doors:
            a, b = d.rooms
            if (a in reached) != (b in reached):
                reached |= {a, b}
                grew = True
    if reached != set(scene.rooms):
        return f"no doorway a robot fits through into {', '.join(sorted(set(scene.rooms) - reached))}"
    return None


def generate_house(seed: int, rules: HouseRules | None = None, tasks_per_house: int = 3) -> GeneratedHouse:
    """The house of `seed` (the same seed, the same house), with up to `tasks_per_house` easy tasks."""
    if seed < 0:
        raise SceneError(f"a house's seed is a whole number >= 0 (got {seed})")
    rules = rules or load_rules()
    plan = draw_plan(seed, rules)
    for attempt in range(ATTEMPTS):
        house = _draw(seed, attempt, plan, rules, tasks_per_house)
        if house is None or not house.tasks or check_house(house.scene) is not None:
            continue
        return house
    raise SceneError(f"no house passed its checks in {ATTEMPTS} draws for seed {seed}; the rules "
                     "(config/house_generation.yaml) ask for more than the rooms hold")


HEADER = """# Generated by `conceptagent scenes generate --seed {seed}` from config/house_generation.yaml
# (draw {attempts} of the seed). A scene file is an input: to change houses, change the rules, not this file.
"""


def write_house(house: GeneratedHouse, out: Path) -> tuple[Path, Path]:
    """DIR/house_N.yaml (a scene file) and DIR/house_N_tasks.yaml (a task file naming it)."""
    out.mkdir(parents=True, exist_ok=True)
    scene_path, tasks_path = out / f"{house.name}.yaml", out / f"{house.name}_tasks.yaml"
    header = HEADER.format(seed=house.seed, attempts=house.attempts)
    scene_path.write_text(header + _dump(house.scene), encoding="utf-8")
    tasks_path.write_text(header + _dump({"name": f"{house.name}_easy", "tasks": house.tasks}), encoding="utf-8")
    return scene_path, tasks_path


def _dump(data: dict[str, Any]) -> str:
    """YAML with one room, object or task to a line where it fits, as the built-in files are written."""

    class Flow(yaml.SafeDumper):
        pass

    def represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> Any:
        flow = all(not isinstance(v, (dict, list)) for v in value)
        return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)

    def represent_dict(dumper: yaml.SafeDumper, value: dict[str, Any]) -> Any:
        flow = "id" in value and "instruction" not in value
        return dumper.represent_mapping("tag:yaml.org,2002:map", value.items(), flow_style=flow)

    Flow.add_representer(list, represent_list)
    Flow.add_representer(dict, represent_dict)
    return yaml.dump(data, Dumper=Flow, sort_keys=False, width=120, allow_unicode=True)
