"""The VoxPoser paper's simulated task templates (its Table 4) on the PyBullet tabletop: seeded
scenes, instructions with any colour / corner / distance / speed, and success judged from the
simulator's ground truth (block poses, the end effector's trace and commanded speeds), in metres.

The judges below read only PyBullet state and the instruction's attributes; they share nothing
with the composer or the map programs.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from conceptagent_ros.voxposer.tabletop import (
    BLOCK_HALF,
    COLOURS,
    TABLE_LOWER,
    TABLE_UPPER,
    BlockSpec,
    CabinetSpec,
    LineSpec,
    Tabletop,
    TabletopScene,
)

SHARED_TASKS = Path(__file__).resolve().parents[2] / ".." / "shared" / "voxposer_tasks.yaml"
PLACES = ("back left corner of the table", "back right corner of the table", "front left corner of the table",
          "front right corner of the table", "right side of the table", "left side of the table",
          "back side of the table", "front side of the table")
SEEN: dict[str, list] = {
    "pos": ["back left corner of the table", "front right corner of the table", "right side of the table",
            "back side of the table"],
    "obj": ["blue block", "green block", "yellow block", "pink block", "brown block"],
    "preposition": ["left of", "front side of", "top of"],
    "dist": [3, 5, 7, 9, 11],
    "region": ["right side of the table", "back side of the table"],
    "velocity": ["faster speed", "a quarter of the speed"],
    "line": ["blue line", "green line", "yellow line", "pink line", "brown line"],
}
DRAWER_OF = {"topmost": "top drawer", "second to the top": "middle drawer", "middle": "middle drawer",
             "second to the bottom": "middle drawer", "bottom": "bottom drawer", "lowest": "bottom drawer"}
SPEED_FACTORS = {"faster speed": 2.0, "a quarter of the speed": 0.25, "half the speed": 0.5}
INSET = 0.05
REST_HAND_XY = np.array([0.48, 0.0])  # where the hand is over the table in the arm's rest pose
SIDE_AXES = {"left of": (1, -1), "right of": (1, 1), "front side of": (0, 1), "back side of": (0, -1)}  # axis, sign


@dataclass(frozen=True)
class TabletopTask:
    template: str
    instruction: str
    scene: TabletopScene
    attributes: dict[str, object]
    judge: Callable[[Tabletop], tuple[bool, str]]


def place_point(place: str) -> np.ndarray:
    """Where a corner or side of the table is (the judge's own reading of the words)."""
    lo, hi = np.asarray(TABLE_LOWER), np.asarray(TABLE_UPPER)
    x, y = (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2
    words = place.split()
    if "back" in words:
        x = lo[0] + INSET
    if "front" in words:
        x = hi[0] - INSET
    if "left" in words:
        y = lo[1] + INSET
    if "right" in words:
        y = hi[1] - INSET
    return np.array([x, y])


def in_region(xy: np.ndarray, region: str) -> bool:
    lo, hi = np.asarray(TABLE_LOWER), np.asarray(TABLE_UPPER)
    mid = (lo + hi) / 2
    words = region.split()
    if "right" in words:
        return bool(xy[1] > mid[1])
    if "left" in words:
        return bool(xy[1] < mid[1])
    if "back" in words:
        return bool(xy[0] < mid[0])
    if "front" in words:
        return bool(xy[0] > mid[0])
    raise ValueError(region)


def _blocks(rng: np.random.Generator, colours: list[str], keep_clear: list[np.ndarray]) -> tuple[BlockSpec, ...]:
    placed: list[np.ndarray] = []
    specs = []
    for colour in colours:
        for _ in range(200):
            xy = rng.uniform([TABLE_LOWER[0] + 0.1, TABLE_LOWER[1] + 0.12], [TABLE_UPPER[0] - 0.1, TABLE_UPPER[1] - 0.12])
            if all(np.linalg.norm(xy - q) > 0.1 for q in placed) and all(np.linalg.norm(xy - q) > 0.14 for q in keep_clear):
                break
        placed.append(xy)
        specs.append(BlockSpec(f"{colour} block", colour, (float(xy[0]), float(xy[1]))))
    return tuple(specs)


def _trace(env: Tabletop) -> np.ndarray:
    return np.asarray(env.ee_trace) if env.ee_trace else env.ee_position()[None]


def _at_place(env: Tabletop, place: str, tolerance: float = 0.08) -> tuple[bool, str]:
    ee = env.ee_position()
    d = float(np.linalg.norm(ee[:2] - place_point(place)))
    return d <= tolerance, f"end effector {d * 100:.1f} cm from the {place}"


def make_task(template_index: int, seed: int, seen: bool = True) -> TabletopTask:
    """Template `template_index` (0-based, Table 4's order) with attributes drawn by `seed`."""
    rng = np.random.default_rng(seed * 1009 + template_index)
    pool: dict[str, list] = SEEN if seen else {**SEEN, "obj": [f"{c} block" for c in COLOURS], "pos": list(PLACES),
                              "dist": list(range(2, 13)), "region": [p for p in PLACES if "side" in p],
                              "line": [f"{c} line" for c in COLOURS]}

    def pick(key: str) -> object:
        options = pool[key]
        return options[int(rng.integers(len(options)))]

    obj = str(pick("obj"))
    colour = obj.split()[0]
    others = [c for c in COLOURS if c != colour]
    distractors = list(rng.choice(others, size=2, replace=False))
    template = TEMPLATES[template_index]
    if template_index == 0:
        prep = str(pick("preposition"))
        scene = TabletopScene(_blocks(rng, [colour, *distractors], []))
        instruction = f"move to the {prep} the {obj}"
        return TabletopTask(template, instruction, scene, {"obj": obj, "preposition": prep},
                            lambda env: _judge_relative(env, obj, prep))
    if template_index == 8:
        region = str(pick("region"))
        scene = TabletopScene(_blocks(rng, distractors, []))
        return TabletopTask(template, f"move to the {region}", scene, {"region": region},
                            lambda env: (in_region(env.ee_position()[:2], region) and env.ee_position()[2] < 0.3,
                                         f"end effector at {np.round(env.ee_position(), 3).tolist()}"))
    if template_index == 9:
        pos, dist = str(pick("pos")), int(pick("dist"))  # type: ignore[call-overload]
        start = REST_HAND_XY
        goal = place_point(pos)
        # the block sits between the start and the goal, so that keeping away matters
        mid = start + (goal - start) * rng.uniform(0.4, 0.6)
        scene = TabletopScene((BlockSpec(obj, colour, (float(mid[0]), float(mid[1]))),
                               *_blocks(rng, distractors, [mid, goal, start])))
        instruction = f"move to the {pos} while staying at least {dist}cm from the {obj}"
        return TabletopTask(template, instruction, scene, {"pos": pos, "dist": dist, "obj": obj},
                            lambda env: _judge_keep_away(env, pos, obj, dist / 100))
    if template_index == 1:
        pos, prep = str(pick("pos")), str(rng.choice(["left of", "right of", "front side of", "back side of"]))
        # Not a contradiction: a goal, or the hand's start, level with the block (across the side's
        # axis) and on its other side cannot be reached, or starts, off the asked side as the judge
        # reads it.
        axis, sign = SIDE_AXES[prep]
        goal = place_point(pos)
        for _ in range(100):
            blocks = list(_blocks(rng, [colour, *distractors], [goal]))
            block = np.asarray(blocks[0].xy)
            if all(abs(p[1 - axis] - block[1 - axis]) >= 0.08 or sign * (p[axis] - block[axis]) > 0
                   for p in (goal, REST_HAND_XY)):
                break
        scene = TabletopScene(tuple(blocks))
        instruction = f"move to the {pos} while staying on the {prep} the {obj}"
        return TabletopTask(template, instruction, scene, {"pos": pos, "preposition": prep, "obj": obj},
                            lambda env: _judge_stay_side(env, pos, obj, prep))
    if template_index == 2:
        pos, dist, speed = str(pick("pos")), int(pick("dist")), str(pick("velocity"))  # type: ignore[call-overload]
        start = REST_HAND_XY
        goal = place_point(pos)
        mid = start + (goal - start) * 0.5
        # The hand starts just above the block (1.8 cm over its top): from the rest pose the path to a
        # corner passes 20 cm over a block on the table and never comes within any of the distances.
        scene = TabletopScene((BlockSpec(obj, colour, (float(mid[0]), float(mid[1]))),
                               *_blocks(rng, distractors, [mid, goal, start])),
                              hand_start=(float(mid[0]), float(mid[1]), 2 * BLOCK_HALF + 0.018))
        instruction = f"move to the {pos} while moving at {speed} when within {dist}cm from the {obj}"
        return TabletopTask(template, instruction, scene, {"pos": pos, "dist": dist, "velocity": speed, "obj": obj},
                            lambda env: _judge_speed_near(env, pos, obj, dist / 100, SPEED_FACTORS[speed]))
    if template_index == 10:
        pos, speed, region = str(pick("pos")), str(pick("velocity")), str(pick("region"))
        # The hand starts inside the region, away from its border and from the goal: from the rest
        # pose it sits on the border of both side regions, and a path away from them never enters.
        hand = _inside_region(rng, region, away_from=place_point(pos))
        scene = TabletopScene(_blocks(rng, distractors, [place_point(pos), hand]),
                              hand_start=(float(hand[0]), float(hand[1]), 0.25))
        instruction = f"move to the {pos} while moving at {speed} in the {region}"
        return TabletopTask(template, instruction, scene, {"pos": pos, "velocity": speed, "region": region},
                            lambda env: _judge_speed_region(env, pos, region, SPEED_FACTORS[speed]))
    if template_index == 5:
        speed = str(pick("velocity"))
        scene = TabletopScene(_blocks(rng, [colour, *distractors], []))
        return TabletopTask(template, f"grasp the {obj} from the table at {speed}", scene, {"obj": obj, "velocity": speed},
                            lambda env: (bool(env.block_position(obj)[2] > BLOCK_HALF + 0.04),
                                         f"{obj} at height {env.block_position(obj)[2] * 100:.1f} cm"))
    if template_index == 6:
        pos = str(pick("pos"))
        scene = TabletopScene(_blocks(rng, [colour, *distractors], [place_point(pos)]), grasped=obj)
        return TabletopTask(template, f"drop the {obj} to the {pos}", scene, {"obj": obj, "pos": pos},
                            lambda env: _judge_dropped(env, obj, pos))
    if template_index == 3:
        deixis = str(rng.choice(["topmost", "second to the bottom"] if seen else
                                ["topmost", "second to the bottom", "bottom", "middle", "second to the top", "lowest"]))
        drawer = DRAWER_OF[deixis]
        opening = [float(rng.uniform(0.0, 0.02)) for _ in range(3)]
        opening[("bottom drawer", "middle drawer", "top drawer").index(drawer)] = float(rng.uniform(0.07, 0.11))
        cabinet = CabinetSpec(front_x=float(rng.uniform(0.6, 0.64)), y=float(rng.uniform(-0.15, 0.15)),
                              opening=tuple(opening))
        scene = TabletopScene(_blocks(rng, distractors[:1], [np.array([cabinet.front_x, cabinet.y])]), cabinet=cabinet)
        return TabletopTask(template, f"close the {deixis} drawer by pushing", scene, {"deixis": deixis},
                            lambda env: (env.drawer_opening(drawer) < 0.015,
                                         f"the {drawer} is {env.drawer_opening(drawer) * 100:.1f} cm open"))
    if template_index in (11, 12):
        pos = str(pick("pos"))
        goal = place_point(pos)
        start = _away_from(rng, goal, 0.18)
        blocks = [BlockSpec(obj, colour, (float(start[0]), float(start[1])))]
        attributes: dict[str, object] = {"obj": obj, "pos": pos}
        if template_index == 11:  # the obstacle sits between the block and the goal
            obstacle_colour = distractors.pop()
            mid = start + (goal - start) * rng.uniform(0.4, 0.6) + rng.uniform(-0.02, 0.02, 2)
            blocks.append(BlockSpec(f"{obstacle_colour} block", obstacle_colour, (float(mid[0]), float(mid[1]))))
            attributes["obstacle"] = f"{obstacle_colour} block"
        blocks += _blocks(rng, distractors[:1], [start, goal, *(np.asarray(b.xy) for b in blocks[1:])])
        scene = TabletopScene(tuple(blocks))
        instruction = f"push the {obj} to the {pos}"
        if template_index == 11:
            instruction += f" while staying away from the {attributes['obstacle']}"
        return TabletopTask(template, instruction, scene, attributes,
                            lambda env: _judge_pushed_to(env, obj, pos, attributes.get("obstacle")))  # type: ignore[arg-type]
    if template_index == 4:
        line = str(pick("line"))
        line_colour = line.split()[0]
        along_x = bool(rng.integers(2))
        centre = rng.uniform([0.42, -0.15], [0.58, 0.15])
        half = np.array([0.15, 0.0]) if along_x else np.array([0.0, 0.15])
        a, b = centre - half, centre + half
        if rng.integers(2):
            a, b = b, a
        start = a + (b - a) * 0.1
        scene = TabletopScene((BlockSpec(obj, colour, (float(start[0]), float(start[1]))),
                               *_blocks(rng, distractors[:1], [start, (a + b) / 2, b])),
                              (LineSpec(line, line_colour, (float(a[0]), float(a[1])), (float(b[0]), float(b[1]))),))
        return TabletopTask(template, f"push the {obj} along the {line}", scene, {"obj": obj, "line": line},
                            lambda env: _judge_along_line(env, obj, a, b))
    if template_index == 7:
        region = str(pick("region"))
        for _ in range(200):  # inside the region, clear of its border, with room to move along it
            start = rng.uniform([TABLE_LOWER[0] + 0.12, TABLE_LOWER[1] + 0.1], [TABLE_UPPER[0] - 0.12, TABLE_UPPER[1] - 0.1])
            if in_region(start, region) and _border_distance(start, region) > 0.08:
                break
        scene = TabletopScene((BlockSpec(obj, colour, (float(start[0]), float(start[1]))),
                               *_blocks(rng, distractors[:1], [start])))
        return TabletopTask(template, f"push the {obj} while letting it stay on the {region}", scene,
                            {"obj": obj, "region": region}, lambda env: _judge_stayed_in(env, obj, region, start))
    raise NotImplementedError(f"template {template_index + 1} ({template!r}) needs pushing or the drawer, "
                              "which the tabletop does not model yet")


def _judge_relative(env: Tabletop, obj: str, prep: str) -> tuple[bool, str]:
    ee, block = env.ee_position(), env.block_position(obj)
    offset = ee - block
    if prep == "top of":
        ok = np.linalg.norm(offset[:2]) < 0.04 and 0.02 < offset[2] < 0.2
    elif prep == "left of":
        ok = offset[1] < -0.03 and abs(offset[0]) < 0.05 and np.linalg.norm(offset) < 0.2
    elif prep == "right of":
        ok = offset[1] > 0.03 and abs(offset[0]) < 0.05 and np.linalg.norm(offset) < 0.2
    elif prep in ("front side of", "front of"):
        ok = offset[0] > 0.03 and abs(offset[1]) < 0.05 and np.linalg.norm(offset) < 0.2
    else:
        ok = offset[0] < -0.03 and abs(offset[1]) < 0.05 and np.linalg.norm(offset) < 0.2
    return bool(ok), f"end effector offset from the {obj}: {np.round(offset * 100, 1).tolist()} cm"


def _box_distance(points: np.ndarray, centre: np.ndarray) -> np.ndarray:
    excess = np.maximum(np.abs(points - centre) - BLOCK_HALF, 0.0)
    return np.linalg.norm(excess, axis=1)


def _judge_keep_away(env: Tabletop, pos: str, obj: str, dist: float) -> tuple[bool, str]:
    at, where = _at_place(env, pos)
    closest = float(_box_distance(_trace(env), env.block_position(obj)).min())
    return at and closest >= dist, f"{where}; closest approach to the {obj} {closest * 100:.1f} cm (asked {dist * 100:.0f})"


def _judge_stay_side(env: Tabletop, pos: str, obj: str, prep: str) -> tuple[bool, str]:
    at, where = _at_place(env, pos)
    block = env.block_position(obj)
    trace = _trace(env)
    axis, sign = SIDE_AXES[prep]
    other = 1 - axis
    # wherever the hand passes the block (level with it across the other axis), it is on the asked side
    level = np.abs(trace[:, other] - block[other]) < 0.05
    wrong = level & (sign * (trace[:, axis] - block[axis]) < 0)
    return at and not wrong.any(), f"{where}; {int(wrong.sum())} trace points on the wrong side of the {obj}"


def _judge_speed_near(env: Tabletop, pos: str, obj: str, dist: float, factor: float) -> tuple[bool, str]:
    at, where = _at_place(env, pos)
    trace, speeds = _trace(env), np.asarray(env.speed_trace or [0.0])
    n = min(len(trace), len(speeds))
    near = (_box_distance(trace[:n], env.block_position(obj)) < dist) & (speeds[:n] > 0)
    base = 0.25
    right = np.isclose(speeds[:n][near], base * factor) if near.any() else np.array([False])
    return at and bool(right.mean() >= 0.8), f"{where}; {int(near.sum())} moves within {dist * 100:.0f} cm, " \
                                             f"{float(right.mean()) * 100:.0f}% at x{factor}"


def _judge_speed_region(env: Tabletop, pos: str, region: str, factor: float) -> tuple[bool, str]:
    at, where = _at_place(env, pos)
    trace, speeds = _trace(env), np.asarray(env.speed_trace or [0.0])
    n = min(len(trace), len(speeds))
    # Moves within 1 cm of the region's border are not judged: the arm tracks its set-points to
    # ~5 mm, so a path along the border (a goal on it: "the right side" seen from "the back side")
    # is on either side of it by chance.
    inside = np.array([in_region(p[:2], region) and _border_distance(p[:2], region) >= 0.01
                       for p in trace[:n]]) & (speeds[:n] > 0)
    right = np.isclose(speeds[:n][inside], 0.25 * factor) if inside.any() else np.array([False])
    return at and bool(right.mean() >= 0.8), f"{where}; {float(right.mean()) * 100:.0f}% of moves in the {region} at x{factor}"


def _judge_dropped(env: Tabletop, obj: str, pos: str) -> tuple[bool, str]:
    block = env.block_position(obj)
    d = float(np.linalg.norm(block[:2] - place_point(pos)))
    return d < 0.1 and block[2] < BLOCK_HALF + 0.02 and env.gripper_closed == 0.0, \
        f"{obj} {d * 100:.1f} cm from the {pos}, height {block[2] * 100:.1f} cm"


def _away_from(rng: np.random.Generator, goal: np.ndarray, distance: float) -> np.ndarray:
    for _ in range(500):
        xy = rng.uniform([TABLE_LOWER[0] + 0.1, TABLE_LOWER[1] + 0.1], [TABLE_UPPER[0] - 0.1, TABLE_UPPER[1] - 0.1])
        if np.linalg.norm(xy - goal) >= distance:
            return xy
    raise RuntimeError("no start far enough from the goal")


def _inside_region(rng: np.random.Generator, region: str, away_from: np.ndarray) -> np.ndarray:
    """A point of `region` at least 8 cm inside its border and 15 cm from `away_from`."""
    lo = np.array(TABLE_LOWER[:2]) + 0.06
    hi = np.array(TABLE_UPPER[:2]) - 0.06
    for _ in range(500):
        xy = rng.uniform(lo, hi)
        if in_region(xy, region) and _border_distance(xy, region) >= 0.08 and np.linalg.norm(xy - away_from) >= 0.15:
            return xy
    raise RuntimeError(f"no start inside the {region}")


def _border_distance(xy: np.ndarray, region: str) -> float:
    mid = (np.asarray(TABLE_LOWER) + np.asarray(TABLE_UPPER)) / 2
    axis = 1 if ("left" in region or "right" in region) else 0
    return float(abs(xy[axis] - mid[axis]))


def _block_trace(env: Tabletop, obj: str) -> np.ndarray:
    return np.asarray(env.block_trace.get(obj) or [env.block_position(obj)])


def _on_table(xyz: np.ndarray) -> bool:
    return bool(xyz[2] > 0.0 and TABLE_LOWER[0] <= xyz[0] <= TABLE_UPPER[0] and TABLE_LOWER[1] <= xyz[1] <= TABLE_UPPER[1])


def _judge_pushed_to(env: Tabletop, obj: str, pos: str, obstacle: str | None) -> tuple[bool, str]:
    block = env.block_position(obj)
    d = float(np.linalg.norm(block[:2] - place_point(pos)))
    ok, why = d <= 0.08 and _on_table(block), f"{obj} {d * 100:.1f} cm from the {pos}"
    if obstacle is not None:
        trace = _block_trace(env, obstacle)
        shift = float(np.linalg.norm(trace[-1][:2] - trace[0][:2]))
        closest = float(np.min(np.linalg.norm(_block_trace(env, obj)[:, :2] - trace[0][:2], axis=1)))
        ok = ok and shift < 0.015 and closest >= 2 * BLOCK_HALF + 0.01
        why += f"; the {obstacle} moved {shift * 100:.1f} cm, closest centres {closest * 100:.1f} cm"
    return ok, why


def _judge_along_line(env: Tabletop, obj: str, a: np.ndarray, b: np.ndarray) -> tuple[bool, str]:
    trace = _block_trace(env, obj)[:, :2]
    axis = (b - a) / np.linalg.norm(b - a)
    rel = trace - a
    off_line = np.abs(rel[:, 0] * axis[1] - rel[:, 1] * axis[0])
    along = float(rel[-1] @ axis)
    length = float(np.linalg.norm(b - a))
    ok = along >= length - 0.08 and float(off_line.max()) <= 0.04 and _on_table(env.block_position(obj))
    return ok, f"{obj} {along * 100:.1f} of {length * 100:.0f} cm along the line, at most {off_line.max() * 100:.1f} cm off it"


def _judge_stayed_in(env: Tabletop, obj: str, region: str, start: np.ndarray) -> tuple[bool, str]:
    trace = _block_trace(env, obj)
    moved = float(np.linalg.norm(trace[-1][:2] - start))
    inside = all(in_region(p[:2], region) for p in trace)
    ok = moved >= 0.05 and inside and _on_table(trace[-1])
    return ok, f"{obj} pushed {moved * 100:.1f} cm, {'always' if inside else 'not always'} on the {region}"


def load_templates() -> list[str]:
    try:
        data = yaml.safe_load(SHARED_TASKS.read_text(encoding="utf-8"))
        return list(data["templates"])
    except (OSError, KeyError, TypeError, yaml.YAMLError):
        return list(DEFAULT_TEMPLATES)


DEFAULT_TEMPLATES = (
    "move to the [preposition] the [obj]", "move to the [pos] while staying on the [preposition] the [obj]",
    "move to the [pos] while moving at [velocity] when within [dist]cm from the obj",
    "close the [deixis] drawer by pushing", "push the [obj] along the [line]", "grasp the [obj] from the table at [velocity]",
    "drop the [obj] to the [pos]", "push the [obj] while letting it stay on [region]", "move to the [region]",
    "move to the [pos] while staying at least [dist]cm from the [obj]",
    "move to the [pos] while moving at [velocity] in the [region]",
    "push the [obj] to the [pos] while staying away from [obstacle]", "push the [obj] to the [pos]",
)
TEMPLATES = DEFAULT_TEMPLATES
IMPLEMENTED = tuple(range(13))
