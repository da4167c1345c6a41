"""Generated houses (world/generation, `conceptagent scenes generate`): judged from what the files say
and from the world they export, not by the generator's own checks. Development seeds only (0-99)."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import ndimage

from conceptagent_ros.evaluation.tasks import load_tasks
from conceptagent_ros.scene.house_geometry import layout
from conceptagent_ros.scene.loader import load_scene, scene_from_dict
from conceptagent_ros.world.generation import generate_house, write_house
from conceptagent_ros.world.house import house as build_house

ROBOT_RADIUS = 0.25  # metres: the base (0.22) and a little
SEEDS = range(0, 12)
FACES = {"+x": (1, 0), "-x": (-1, 0), "+y": (0, 1), "-y": (0, -1)}


def test_the_same_seed_gives_the_same_house_and_other_seeds_other_houses() -> None:
    first, again = generate_house(7), generate_house(7)
    assert first.scene == again.scene and first.tasks == again.tasks
    others = {yaml.safe_dump(generate_house(s).scene) for s in range(8, 14)}
    assert len(others) == 6


@pytest.mark.parametrize("seed", SEEDS)
def test_every_room_and_every_task_place_is_reached_by_the_robot_on_the_exported_map(seed: int) -> None:
    generated = generate_house(seed)
    scene = scene_from_dict(generated.scene)
    home = build_house(scene)
    grid = home.grid
    free = ~ndimage.binary_dilation(grid.occupied, iterations=int(math.ceil(ROBOT_RADIUS / grid.resolution)))
    regions, _ = ndimage.label(free)
    start = grid.cell_of(*scene.robot.start_position[:2])
    assert free[start], "the robot starts in something"
    reached = regions == regions[start]
    rows, cols = np.nonzero(reached)
    xs = grid.origin[0] + (cols + 0.5) * grid.resolution
    ys = grid.origin[1] + (rows + 0.5) * grid.resolution
    for room in scene.rooms.values():
        x0, y0, x1, y1 = room.bounds
        assert np.any((xs > x0) & (xs < x1) & (ys > y0) & (ys < y1)), f"{room.id} cannot be driven into"
    boxes = layout(scene)
    for task in generated.tasks:
        named = {w.strip("()") for w in task["goal"].split()} & set(scene.objects)
        thing = next(o for o in named if scene.objects[o].has("pickupable") and scene.objects[o].parent is not None)
        for oid in {scene.objects[thing].parent} | (named - {thing}):
            while scene.objects[oid].parent is not None:  # a pan as a destination: the stove it stands on
                oid = scene.objects[oid].parent
            box = boxes[oid]
            gap = np.hypot(np.maximum(np.abs(xs - box.center[0]) - box.size[0] / 2, 0),
                           np.maximum(np.abs(ys - box.center[1]) - box.size[1] / 2, 0))
            assert gap.min() < 0.45, f"{task['id']}: the robot gets no nearer than {gap.min():.2f} m to {oid}"


@pytest.mark.parametrize("seed", SEEDS)
def test_furniture_stands_with_its_back_to_a_wall_facing_the_room_and_clear_of_other_pieces(seed: int) -> None:
    scene = scene_from_dict(generate_house(seed).scene)
    floor = [b for b in layout(scene).values() if scene.objects[b.object_id].parent is None]
    for box in floor:
        room = scene.rooms[scene.objects[box.object_id].room]
        x0, y0, x1, y1 = room.bounds
        hx, hy = box.size[0] / 2, box.size[1] / 2
        assert x0 - 1e-6 <= box.center[0] - hx and box.center[0] + hx <= x1 + 1e-6
        assert y0 - 1e-6 <= box.center[1] - hy and box.center[1] + hy <= y1 + 1e-6
        if box.faces is not None:  # against the wall behind its front
            fx, fy = box.faces
            back = {(1, 0): box.center[0] - hx - x0, (-1, 0): x1 - box.center[0] - hx,
                    (0, 1): box.center[1] - hy - y0, (0, -1): y1 - box.center[1] - hy}[(round(fx), round(fy))]
            assert back < 0.05, f"{box.object_id} stands {back:.2f} m off the wall behind it"
        for other in floor:
            if other is not box:
                apart = max(abs(box.center[0] - other.center[0]) - (box.size[0] + other.size[0]) / 2,
                            abs(box.center[1] - other.center[1]) - (box.size[1] + other.size[1]) / 2)
                assert apart > 0.01, f"{box.object_id} and {other.object_id} overlap"


def test_houses_have_the_rooms_and_furniture_of_homes_and_fridges_hung_on_either_side() -> None:
    houses = [generate_house(s).scene for s in range(40)]
    hinges = {o["hinge"] for h in houses for o in h["objects"] if o["category"] == "fridge"}
    assert hinges == {"left", "right"}
    for h in houses:
        cats = [o["category"] for o in h["objects"]]
        rooms = [r["category"] for r in h["rooms"]]
        assert "kitchen" in rooms and {"fridge", "countertop", "sink"} <= set(cats)
        if "bedroom" in rooms:
            assert "bed" in cats
        things = [o["category"] for o in h["objects"] if "in" in o]
        assert len(things) == len(set(things)), "a kind of thing twice: 'the mug' would name two"
    counts = [len(h["rooms"]) for h in houses]
    assert min(counts) == 2 and max(counts) == 5


def test_easy_tasks_take_a_thing_in_plain_view_to_a_place_where_it_does_not_yet_hold() -> None:
    for seed in range(20):
        generated = generate_house(seed)
        scene = scene_from_dict(generated.scene)
        assert 1 <= len(generated.tasks) <= 3
        for task in generated.tasks:
            words = task["goal"].replace("(", " ").replace(")", " ").split()
            thing = next(w for w in words if w in scene.objects and scene.objects[w].has("pickupable"))
            holder = scene.objects[scene.objects[thing].parent]
            assert not holder.has("openable"), f"{task['id']}: {thing} is shut in {holder.id}"
            assert scene.objects[thing].category.replace("_", " ") in task["instruction"]
            destinations = [w for w in words if w in scene.objects and w != thing]
            kinds = [w for w in words if w not in scene.objects and not w.startswith("?") and w not in ("in", "exists", "-")]
            assert holder.id not in destinations and holder.category not in kinds


def test_generated_tasks_run_on_the_symbolic_world_to_their_goals(tmp_path: Path) -> None:
    """The offline planner reaches every goal: the houses and tasks are well-formed end to end."""
    import io

    from conceptagent_ros.evaluation.bench import BenchConfig, run_bench

    out = tmp_path / "houses"
    for seed in (0, 1, 2):
        write_house(generate_house(seed), out)
    tasks = [t for seed in (0, 1, 2) for t in load_tasks(out / f"house_{seed}_tasks.yaml")]
    rows = run_bench(tasks, BenchConfig(), stream=io.StringIO())
    assert len(rows) == len(tasks)
    failed = [r["task_id"] for r in rows if not r["success"]]
    assert not failed, f"the offline planner failed {failed}"


def test_the_cli_writes_scene_and_task_files_that_load_and_refuses_bad_seeds(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "conceptagent_ros.cli"]
    done = subprocess.run([*cli, "scenes", "generate", "--seeds", "3-4", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert load_scene(str(tmp_path / "house_3.yaml")).name == "house_3"
    assert [t.scene for t in load_tasks(tmp_path / "house_4_tasks.yaml")][0] == str(tmp_path / "house_4.yaml")
    combined = load_tasks(tmp_path / "tasks.yaml")
    assert {t.id.split("_easy")[0] for t in combined} == {"house_3", "house_4"}
    for bad in (["--seeds", "9-2"], ["--seed", "-1"], []):
        refused = subprocess.run([*cli, "scenes", "generate", *bad, "--out", str(tmp_path / "x")],
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2 and "seed" in refused.stderr


def test_a_door_hung_on_its_right_swings_out_from_its_right_edge_in_pybullet(tmp_path: Path) -> None:
    """A fridge against the south wall, used from the north: seen from there, its right edge is at -x."""
    import pybullet

    from conceptagent_ros.world.export import export_world
    from conceptagent_ros.world.pybullet_world import load_world

    data = {"name": "hinges", "rooms": [{"id": "kitchen_1", "category": "kitchen", "bounds": [0, 0, 4, 4]}],
            "objects": [{"id": "fridge_1", "category": "fridge", "position": [2.0, 0.37, 0], "faces": "+y",
                         "hinge": "right"},
                        {"id": "fridge_2", "category": "fridge", "position": [3.2, 0.37, 0], "faces": "+y"}]}
    done = export_world(scene_from_dict(data), tmp_path)
    client = pybullet.connect(pybullet.DIRECT)
    try:
        bodies = load_world(pybullet, done.sdf, client)
        for name, edge_x in (("fridge_1", 2.0 - 0.35), ("fridge_2", 3.2 + 0.35)):  # right, and left (the default)
            body = bodies[name]
            lower, upper = pybullet.getJointInfo(body, 0, physicsClientId=client)[8:10]
            opened = upper if upper > 0 else lower
            pybullet.resetJointState(body, 0, 0.8 * opened, physicsClientId=client)
            lo, hi = pybullet.getAABB(body, 0, physicsClientId=client)
            assert hi[1] > 0.37 + 0.35 + 0.3, f"{name}'s door does not swing out into the room"
            assert min(abs(lo[0] - edge_x), abs(hi[0] - edge_x)) < 0.1, f"{name}'s door turns on the wrong edge"
    finally:
        pybullet.disconnect(client)


def test_things_are_found_where_their_room_keeps_them() -> None:
    """A towel in the bathroom's cabinet, plates in the kitchen's: not the other way round."""
    bathroom_only, kitchen_only = {"towel", "toilet_paper", "soap_bottle", "toothbrush"}, {"plate", "pot", "wine_bottle"}
    seen: set[tuple[str, str]] = set()
    for seed in range(40):
        scene = scene_from_dict(generate_house(seed).scene)
        for obj in scene.objects.values():
            holder = scene.objects.get(obj.parent or "")
            if holder is None or holder.category != "cabinet":
                continue
            room = scene.rooms[holder.room].category
            seen.add((room, obj.category))
            assert not (room == "kitchen" and obj.category in bathroom_only), f"{obj.id} in the kitchen's {holder.id}"
            assert not (room == "bathroom" and obj.category in kitchen_only), f"{obj.id} in the bathroom's {holder.id}"
    assert {r for r, _ in seen} >= {"kitchen", "bathroom"}
