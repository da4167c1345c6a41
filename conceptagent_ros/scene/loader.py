"""Load scenes from YAML (built-in names under config/scenes/ or any path) with clear errors."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from conceptagent_ros.errors import ConceptAgentError, SceneError
from conceptagent_ros.paths import config_dir
from conceptagent_ros.scene.model import AFFORDANCES, STATE_KEYS, RobotConfig, Room, Scene, SceneObject, room_at
from conceptagent_ros.scene.schema import ObjectSpec, validate_scene
from conceptagent_ros.skills.contract import load_skill_library

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


@lru_cache(maxsize=1)
def category_defaults() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load((config_dir() / "categories.yaml").read_text(encoding="utf-8"))
    return dict(data["categories"])


def domain_types(scene: Scene) -> set[str]:
    """The PDDL types of a scene's domain: every known category, the scene's own, and room."""
    return set(category_defaults()) | scene.categories() | {"room"}


def scenes_dir() -> Path:
    return config_dir() / "scenes"


def list_scenes(setting: str | None = None) -> list[str]:
    """The built-in scenes; with `setting`, only those of it (household, tabletop)."""
    names = sorted(p.stem for p in scenes_dir().glob("*.yaml"))
    if setting is None:
        return names
    return [n for n in names if load_scene(n).setting == setting]


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
    return scene_from_dict(read_yaml(path, SceneError), source=str(path))


def read_yaml(path: Path, error: type[ConceptAgentError]) -> Any:
    """Parsed YAML (safe_load: no Python tags), or `error` in one line naming the file and where."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    except OSError as e:
        raise error(f"{path}: cannot be read: {e.strerror or e}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise error(f"{path}: not valid YAML{at}: {problem}") from None


FACES = {"+x": (1.0, 0.0), "-x": (-1.0, 0.0), "+y": (0.0, 1.0), "-y": (0.0, -1.0)}


def _vec3(value: list[float]) -> tuple[float, float, float]:
    return (value[0], value[1], value[2] if len(value) == 3 else 0.0)


def scene_from_dict(data: Any, source: str = "<scene>") -> Scene:
    """A Scene from parsed YAML: the shape is checked by scene/schema.py, the rest here."""
    spec = validate_scene(data, source)
    defaults = category_defaults()
    skills = set(load_skill_library().names())
    name = spec.name or Path(source).stem

    rooms: dict[str, Room] = {}
    for i, r in enumerate(spec.rooms):
        if r.id in rooms:
            raise SceneError(f"{source}: rooms[{i}] ({r.id}): duplicate id")
        rooms[r.id] = Room(r.id, r.category, r.bounds)

    by_id: dict[str, ObjectSpec] = {}
    for i, o in enumerate(spec.objects):
        if o.id in by_id or o.id in rooms:
            raise SceneError(f"{source}: objects[{i}] ({o.id}): duplicate id")
        by_id[o.id] = o

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
        category = raw.category
        if category not in defaults and raw.affordances is None:
            raise SceneError(
                f"{where}: unknown category '{category}' and no affordances given; "
                "add affordances: [...] or use a category from config/categories.yaml"
            )
        base = defaults.get(category, {})
        affordances = list(raw.affordances if raw.affordances is not None else base.get("affordances", []))
        for a in affordances:
            if a not in AFFORDANCES:
                raise SceneError(f"{where}: affordances: unknown affordance '{a}'; known: {', '.join(AFFORDANCES)}")
        state = {k: bool(v) for k, v in (base.get("state") or {}).items()}
        for k, v in raw.state.items():
            if k not in STATE_KEYS:
                raise SceneError(f"{where}: state: unknown state '{k}'; known: {', '.join(STATE_KEYS)}")
            state[k] = v
        parent: SceneObject | None = None
        if raw.inside is not None:
            if raw.inside not in by_id:
                raise SceneError(f"{where}: 'in: {raw.inside}' names no object of this scene")
            parent = build(raw.inside)
            if not parent.has("receptacle"):
                raise SceneError(f"{where}: it is in '{raw.inside}', which is not a receptacle")
        if raw.position is not None:
            position = _vec3(raw.position)
        elif parent is not None:
            position = parent.position
        else:
            raise SceneError(f"{where}: needs a position [x, y, z] or 'in: <receptacle>'")
        room = raw.room or (parent.room if parent else None) or room_at(rooms, position[0], position[1])
        if room not in rooms:
            raise SceneError(f"{where}: room '{room}' is not one of {', '.join(rooms)} (or its position is outside every room)")
        obj = SceneObject(id=oid, category=category, room=str(room), position=position,
                          affordances=frozenset(affordances), state=state, parent=raw.inside, hidden=raw.hidden,
                          attributes=dict(raw.attributes), faces=FACES[raw.faces] if raw.faces else None,
                          size=raw.size, hinge=raw.hinge)
        objects[oid] = obj
        resolving.discard(oid)
        return obj

    for oid in by_id:
        build(oid)
    objects = {oid: objects[oid] for oid in by_id}  # keep file order

    start_room = spec.robot.start_room or next(iter(rooms))
    if start_room not in rooms:
        raise SceneError(f"{source}: robot.start_room: '{start_room}' is not a room of this scene")
    start = _vec3(spec.robot.start) if spec.robot.start is not None else rooms[start_room].centre
    for skill in spec.failures:
        if skill not in skills:
            raise SceneError(f"{source}: failures.{skill}: no such skill; skills are {', '.join(sorted(skills))}")
    robot = RobotConfig(start_room=start_room, start_position=start, reach=spec.robot.reach,
                        view_range=spec.robot.view_range)
    return Scene(name=name, description=spec.description, rooms=rooms, objects=objects, robot=robot,
                 failures=dict(spec.failures), setting=spec.setting)


def _check_id(value: Any, where: str) -> str:
    text = str(value)
    if not ID_PATTERN.match(text):
        raise SceneError(f"{where}: id '{text}' must be lower-case letters, digits and '_' (a PDDL name)")
    return text


