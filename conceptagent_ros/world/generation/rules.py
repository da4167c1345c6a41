"""The generator's rules (config/house_generation.yaml) as typed data, checked on load."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from conceptagent_ros.errors import SceneError
from conceptagent_ros.paths import config_dir

Range = tuple[float, float]


@dataclass(frozen=True)
class PieceRule:
    category: str
    width: Range  # along the wall it stands against
    depth: Range  # out of that wall
    height: Range
    chance: float = 1.0
    middle: bool = False  # free-standing in the room (a dining table), not against a wall


@dataclass(frozen=True)
class RoomRule:
    area: Range
    run: tuple[PieceRule, ...]  # side by side along one wall (a kitchen's counters)
    furniture: tuple[PieceRule, ...]


@dataclass(frozen=True)
class ThingsRule:
    count: tuple[int, int]
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class HouseRules:
    plans: tuple[tuple[tuple[str, ...], float], ...]
    rooms: dict[str, RoomRule]
    things: dict[str, ThingsRule]
    destinations: dict[str, tuple[str, ...]]
    words: dict[str, str]

    def things_for(self, room: str, holder: str) -> ThingsRule | None:
        """What may be found in or on `holder` in a room of kind `room`."""
        return self.things.get(f"{room}/{holder}", self.things.get(holder))

    def word(self, category: str) -> str:
        return self.words.get(category, category.replace("_", " "))


def _range(value: Any, where: str) -> Range:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value)
            and 0 <= value[0] <= value[1]):
        raise SceneError(f"{where}: a range is [low, high] with 0 <= low <= high (got {value!r})")
    return float(value[0]), float(value[1])


def _piece(raw: dict[str, Any], where: str) -> PieceRule:
    return PieceRule(category=str(raw["category"]), width=_range(raw["width"], f"{where}.width"),
                     depth=_range(raw["depth"], f"{where}.depth"), height=_range(raw["height"], f"{where}.height"),
                     chance=float(raw.get("chance", 1.0)), middle=bool(raw.get("middle", False)))


def rules_from_dict(data: dict[str, Any], source: str) -> HouseRules:
    from conceptagent_ros.scene.loader import category_defaults

    known = set(category_defaults())
    try:
        plans = tuple((tuple(str(r) for r in p["rooms"]), float(p.get("weight", 1.0))) for p in data["plans"])
        rooms = {
            name: RoomRule(area=_range(r["area"], f"{source}: rooms.{name}.area"),
                           run=tuple(_piece(p, f"{source}: rooms.{name}.run[{i}]") for i, p in enumerate(r.get("run", []))),
                           furniture=tuple(_piece(p, f"{source}: rooms.{name}.furniture[{i}]")
                                           for i, p in enumerate(r.get("furniture", []))))
            for name, r in data["rooms"].items()
        }
        things = {holder: ThingsRule(count=(int(t["count"][0]), int(t["count"][1])), kinds=tuple(t["kinds"]))
                  for holder, t in data["things"].items()}
        destinations = {kind: tuple(places) for kind, places in data["destinations"].items()}
        words = {str(k): str(v) for k, v in (data.get("words") or {}).items()}
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise SceneError(f"{source}: malformed house generation rules ({type(e).__name__}: {e})") from None
    for plan, _ in plans:
        missing = [r for r in plan if r not in rooms]
        if missing:
            raise SceneError(f"{source}: a plan names rooms with no rules: {', '.join(missing)}")
    holders = {key.split("/")[-1] for key in things}
    named = ({p.category for r in rooms.values() for p in (*r.run, *r.furniture)} | holders
             | {k for t in things.values() for k in t.kinds} | set(destinations)
             | {d for ds in destinations.values() for d in ds})
    unknown = sorted(named - known)
    if unknown:
        raise SceneError(f"{source}: categories not in config/categories.yaml: {', '.join(unknown)}")
    defaults = category_defaults()
    not_holders = sorted(c for c in holders | {d for ds in destinations.values() for d in ds}
                         if "receptacle" not in defaults[c].get("affordances", []))
    if not_holders:
        raise SceneError(f"{source}: things are put in or on categories that hold nothing: {', '.join(not_holders)}")
    return HouseRules(plans, rooms, things, destinations, words)


@lru_cache(maxsize=4)
def load_rules(path: Path | None = None) -> HouseRules:
    path = path or config_dir() / "house_generation.yaml"
    return rules_from_dict(yaml.safe_load(path.read_text(encoding="utf-8")), str(path))
