"""Load scenes from YAML (built-in names under config/scenes/ or any path) with clear errors."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from conceptagent_ros.errors import SceneError
from conceptagent_ros.paths import config_dir
from conceptagent_ros.scene.model import AFFORDANCES, STATE_KEYS, RobotConfig, Room, Scene, SceneObject

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


@lru_cache(maxsize=1)
def category_defaults() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load((config_dir() / "categories.yaml").read_text(encoding="utf-8"))
    return dict(data["categories"])


def scenes_dir() -> Path:
    return config_dir() / "scenes"


def list_scenes() -> list[str]:
    return sorted(p.stem for p in scenes_dir().glob("*.yaml"))


def resolve_scene_path(name_or_path: str) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or "/" in name_or_path:
        if not candidate.is_file():
            raise SceneError(f"scene file {name_or_path} does not exist")
        return candidate
    builtin = scenes_dir() / f"{name_or_path}.yaml"
    if not builtin.is_file():
        raise SceneError(
            f"unknown scene '{name_or_path}'; built-in scenes are: {', '.join(list_scenes())} "
            "(or pass the path of a scene YAML file)"
        )
    return builtin


def load_scene(name_or_path: str) -> Scene:
    path = resolve_scene_path(name_or_path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise SceneError(f"{path}: not valid YAML: {e}") from e
    return scene_from_dict(data, source=str(path))


def _vec3(value: Any, where: str) -> tuple[float, float, float]:
    if not isinstance(value, (list, tuple)) or len(value) not in (2, 3):
        raise SceneError(f"{where}: position must be [x, y] or [x, y, z] in metres, got {value!r}")
    try:
        xs = [float(v) for v in value]
    except (TypeError, ValueError) as e:
        raise SceneError(f"{where}: position must be numbers, got {value!r}") from e
    if any(x != x or abs(x) > 1e4 for x in xs):  # NaN or absurd
        raise SceneError(f"{where}: position must be finite metres, got {value!r}")
    return (xs[0], xs[1], xs[2] if len(xs) == 3 else 0.0)


def scene_from_dict(data: Any, source: str = "<scene>") -> Scene:
    if not isinstance(data, dict):
        raise SceneError(f"{source}: a scene file is a mapping with rooms: and objects:")
    defaults = category_defaults()
    name = str(data.get("name") or Path(source).stem)

    rooms: dict[str, Room] = {}
    for i, raw in enumerate(data.get("rooms") or []):
        where = f"{source}: rooms[{i}]"
        if not isinstance(raw, dict) or "id" not in raw or "bounds" not in raw:
            raise SceneError(f"{where}: a room needs id and bounds [x_min, y_min, x_max, y_max]")
        rid = _check_id(raw["id"], where)
        bounds = raw["bounds"]
        if not (isinstance(bounds, list) and len(bounds) == 4 and bounds[0] < bounds[2] and bounds[1] < bounds[3]):
            raise SceneError(f"{where}: bounds must be [x_min, y_min, x_max, y_max] with min < max")
        rooms[rid] = Room(rid, str(raw.get("category", "room")), tuple(float(b) for b in bounds))  # type: ignore[arg-type]
    if not rooms:
        raise SceneError(f"{source}: a scene needs at least one room")

    raw_objects = data.get("objects") or []
    if not isinstance(raw_objects, list) or not raw_objects:
        raise SceneError(f"{source}: objects: must be a non-empty list")
    by_id: dict[str, dict[str, Any]] = {}
    for i, raw in enumerate(raw_objects):
        where = f"{source}: objects[{i}]"
        if not isinstance(raw, dict) or "id" not in raw or "category" not in raw:
            raise SceneError(f"{where}: an object needs at least id and category")
        oid = _check_id(raw["id"], where)
        if oid in by_id or oid in rooms:
            raise SceneError(f"{where}: duplicate id '{oid}'")
        by_id[oid] = raw

    objects: dict[str, SceneObject] = {}
    resolving: set[str] = set()

    def build(oid: str) -> SceneObject:
        if oid in objects:
            return objects[oid]
        if oid in resolving:
            raise SceneError(f"{source}: containment cycle through '{oid}'")
        resolving.add(oid)
        raw = by_id[oid]
        where = f"{source}: object '{oid}'"
        category = str(raw["category"])
        if category not in defaults and "affordances" not in raw:
            raise SceneError(
                f"{where}: unknown category '{category}' and no affordances given; "
                "add affordances: [...] or use a category from config/categories.yaml"
            )
        base = defaults.get(category, {})
        affordances = list(raw.get("affordances", base.get("affordances", [])))
        for a in affordances:
            if a not in AFFORDANCES:
                raise SceneError(f"{where}: unknown affordance '{a}'; known: {', '.join(AFFORDANCES)}")
        state = {k: bool(v) for k, v in (base.get("state") or {}).items()}
        for k, v in (raw.get("state") or {}).items():
            if k not in STATE_KEYS:
                raise SceneError(f"{where}: unknown state '{k}'; known: {', '.join(STATE_KEYS)}")
            if not isinstance(v, bool):
                raise SceneError(f"{where}: state '{k}' must be true or false, got {v!r}")
            state[k] = v
        parent_id = raw.get("in")
        parent: SceneObject | None = None
        if parent_id is not None:
            if parent_id not in by_id:
                raise SceneError(f"{where}: 'in: {parent_id}' names no object of this scene")
            parent = build(str(parent_id))
            if not parent.has("receptacle"):
                raise SceneError(f"{where}: it is in '{parent_id}', which is not a receptacle")
        if "position" in raw:
            position = _vec3(raw["position"], where)
        elif parent is not None:
            position = parent.position
        else:
            raise SceneError(f"{where}: needs a position [x, y, z] or 'in: <receptacle>'")
        room = raw.get("room") or (parent.room if parent else None) or _room_at(rooms, position)
        if room not in rooms:
            raise SceneError(f"{where}: room '{room}' is not one of {', '.join(rooms)} (or its position is outside every room)")
        obj = SceneObject(
            id=oid, category=category, room=str(room), position=position,
            affordances=frozenset(affordances), state=state,
            parent=str(parent_id) if parent_id is not None else None, hidden=bool(raw.get("hidden", False)),
        )
        objects[oid] = obj
        resolving.discard(oid)
        return obj

    for oid in by_id:
        build(oid)
    objects = {oid: objects[oid] for oid in by_id}  # keep file order

    robot_raw = data.get("robot") or {}
    start_room = robot_raw.get("start_room", next(iter(rooms)))
    if start_room not in rooms:
        raise SceneError(f"{source}: robot.start_room '{start_room}' is not a room of this scene")
    start = _vec3(robot_raw["start"], f"{source}: robot.start") if "start" in robot_raw else rooms[start_room].centre
    failures = {str(k): float(v) for k, v in (data.get("failures") or {}).items()}
    for skill, p in failures.items():
        if not 0.0 <= p <= 1.0:
            raise SceneError(f"{source}: failures.{skill} must be a probability in [0, 1], got {p}")
    robot = RobotConfig(
        start_room=start_room, start_position=start,
        reach=float(robot_raw.get("reach", 1.0)), view_range=float(robot_raw.get("view_range", 8.0)),
    )
    return Scene(name=name, description=str(data.get("description", "")), rooms=rooms, objects=objects,
                 robot=robot, failures=failures)


def _check_id(value: Any, where: str) -> str:
    text = str(value)
    if not ID_PATTERN.match(text):
        raise SceneError(f"{where}: id '{text}' must be lower-case letters, digits and '_' (a PDDL name)")
    return text


def _room_at(rooms: dict[str, Room], position: tuple[float, float, float]) -> str | None:
    for room in rooms.values():
        if room.contains(position[0], position[1]):
            return room.id
    return None
