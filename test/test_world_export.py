"""Worlds exported from the scene files, checked by what reads them elsewhere: SDFormat's own parser
(libsdformat, C++, as Gazebo reads a world), PyBullet's loadSDF (every model where the scene's
layout puts it, nothing inside anything else, doors and drawers moving within their limits), and the
occupancy map read as map_server would (PIL and YAML) against the world's geometry in PyBullet."""
from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scipy import ndimage
from scipy.spatial.transform import Rotation

from conceptagent_ros.scene.house_geometry import layout
from conceptagent_ros.scene.loader import list_scenes, load_scene

REPO = Path(__file__).resolve().parents[1]
SCENES = list_scenes("household")
FOOTPRINT_RADIUS = 0.25  # the base's circumscribed radius (m), as a Nav2 costmap would inflate by it


@pytest.fixture(scope="module")
def worlds(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("worlds")
    done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "world", "export", "all", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in SCENES:
        assert f"{name}:" in done.stdout
    return out


@pytest.fixture(scope="module")
def sdf_check(tmp_path_factory) -> Path:
    """tools/sdf_check.cpp compiled against libsdformat (make test installs libsdformat-dev)."""
    packages = subprocess.run(["pkg-config", "--list-all"], capture_output=True, text=True).stdout \
        if shutil.which("pkg-config") else ""
    names = sorted((line.split()[0] for line in packages.splitlines() if line.startswith("sdformat")), reverse=True)
    if not names or not shutil.which("g++"):
        reason = "libsdformat-dev and g++ are needed (tools/ensure_sdformat.sh installs them)"
        if os.environ.get("CONCEPTAGENT_REQUIRE_SDFORMAT"):
            pytest.fail(reason)
        pytest.skip(reason)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", names[0]], capture_output=True, text=True,
                           check=True).stdout.split()
    binary = tmp_path_factory.mktemp("sdf_check") / "sdf_check"
    subprocess.run(["g++", "-std=c++17", "-O1", "-o", str(binary), str(REPO / "tools" / "sdf_check.cpp"), *flags],
                   check=True, timeout=300)
    return binary


def test_every_world_parses_with_sdformats_own_parser_and_names_every_scene_object(worlds, sdf_check) -> None:
    for name in SCENES:
        done = subprocess.run([str(sdf_check), str(worlds / f"{name}.sdf")], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and not done.stderr, done.stderr
        lines = [line.split() for line in done.stdout.splitlines()]
        assert ["world", name] in lines
        models = {parts[1]: parts for parts in lines if parts[0] == "model"}
        scene = load_scene(name)
        assert set(scene.objects) | {"ground_plane", "walls"} == set(models)
        # sdf::JointType 3 is FIXED: a wall unit's mount to the world, the others its door's or drawer's
        joints = {parts[1]: parts for parts in lines if parts[0] == "joint" and parts[3] != "3"}
        mounted = {parts[1] for parts in lines if parts[0] == "joint" and parts[3] == "3"}
        assert mounted == {oid for oid, box in layout(load_scene(name)).items() if box.hung and box.container}
        for oid, obj in scene.objects.items():
            opens = obj.has("openable") and obj.has("receptacle") and not obj.has("pickupable")
            assert (oid in joints) == opens, oid
            assert models[oid][2] == ("dynamic" if opens or obj.has("pickupable") else "static"), oid
            if opens:
                lower, upper = float(joints[oid][4]), float(joints[oid][5])
                assert lower < upper


def test_generated_houses_parse_with_sdformats_own_parser_with_doors_hung_on_both_sides(sdf_check, tmp_path) -> None:
    """Houses from `scenes generate` (development seeds) are worlds Gazebo reads: every object a model,
    every door and drawer a joint that moves, right-hung doors included."""
    done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "scenes", "generate", "--seeds", "0-5",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    hinges: set[str] = set()
    for seed in range(6):
        scene = load_scene(str(tmp_path / f"house_{seed}.yaml"))
        exported = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "world", "export",
                                   str(tmp_path / f"house_{seed}.yaml"), "--out", str(tmp_path / "worlds")],
                                  capture_output=True, text=True, timeout=300)
        assert exported.returncode == 0, exported.stderr
        checked = subprocess.run([str(sdf_check), str(tmp_path / "worlds" / f"house_{seed}.sdf")],
                                 capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0 and not checked.stderr, checked.stderr
        lines = [line.split() for line in checked.stdout.splitlines()]
        assert {parts[1] for parts in lines if parts[0] == "model"} == set(scene.objects) | {"ground_plane", "walls"}
        joints = {parts[1]: parts for parts in lines if parts[0] == "joint"}
        for oid, obj in scene.objects.items():
            if obj.has("openable") and obj.has("receptacle") and not obj.has("pickupable"):
                assert float(joints[oid][4]) < float(joints[oid][5]), oid
                if obj.hinge is not None:
                    hinges.add(obj.hinge)
    assert hinges == {"left", "right"}


def test_the_sdformat_checker_reports_a_broken_world(sdf_check, tmp_path) -> None:
    """The judge itself: a world whose joint names a link that does not exist is an error."""
    broken = tmp_path / "broken.sdf"
    broken.write_text('<?xml version="1.0"?><sdf version="1.9"><world name="w"><model name="m">'
                      '<link name="a"/><joint name="j" type="revolute"><parent>a</parent><child>nowhere</child>'
                      '<axis><xyz>0 0 1</xyz></axis></joint></model></world></sdf>')
    done = subprocess.run([str(sdf_check), str(broken)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "nowhere" in done.stderr


def _pybullet_world(sdf: Path):  # noqa: ANN202 - (pybullet module, client, bodies by model name)
    """The world as PyBullet's loadSDF reads it. PyBullet refuses a joint to `world` (a wall unit's
    mount): such joints are left out of the copy it reads (_settled_world fixes those models)."""
    import xml.etree.ElementTree as ET

    p = pytest.importorskip("pybullet")
    tree = ET.parse(sdf)
    for model in tree.getroot().iter("model"):
        for joint in model.findall("joint"):
            if joint.findtext("parent") == "world":
                model.remove(joint)
    client = p.connect(p.DIRECT)
    with tempfile.TemporaryDirectory() as scratch:
        readable = Path(scratch) / sdf.name
        tree.write(readable)
        bodies = p.loadSDF(str(readable), physicsClientId=client)
    names = {p.getBodyInfo(b, physicsClientId=client)[1].decode(): b for b in bodies}
    return p, client, names


def _settled_world(sdf: Path):  # noqa: ANN202 - as _pybullet_world
    """The world in PyBullet, its static and wall-mounted models fixed, a second under gravity later."""
    p, client, bodies = _pybullet_world(sdf)
    for static in _static_names(sdf) | _mounted_names(sdf):
        p.changeDynamics(bodies[static], -1, mass=0.0, physicsClientId=client)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    for _ in range(240):
        p.stepSimulation(physicsClientId=client)
    return p, client, bodies


def _static_names(sdf: Path) -> set[str]:
    import xml.etree.ElementTree as ET

    return {m.get("name") for m in ET.parse(sdf).getroot().iter("model") if m.findtext("static") == "true"}


def _mounted_names(sdf: Path) -> set[str]:
    """Models with a fixed joint to the world (a wall unit), as Gazebo holds them."""
    import xml.etree.ElementTree as ET

    return {m.get("name") for m in ET.parse(sdf).getroot().iter("model")
            if any(j.get("type") == "fixed" and j.findtext("parent") == "world" for j in m.findall("joint"))}


@pytest.mark.parametrize("name", SCENES)
def test_pybullet_loads_the_world_with_every_model_where_the_scene_puts_it(worlds, name) -> None:
    p, client, bodies = _pybullet_world(worlds / f"{name}.sdf")
    try:
        boxes = layout(load_scene(name))
        for oid, box in boxes.items():
            body = bodies[oid]
            position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
            inertial = p.getDynamicsInfo(body, -1, physicsClientId=client)[3]
            origin = np.asarray(position) - Rotation.from_quat(orientation).apply(inertial)
            assert np.linalg.norm(origin - np.asarray(box.center)) <= 0.01, (oid, origin, box.center)
        # nothing stands inside anything else (static pieces do not collide with each other in PyBullet)
        for static in _static_names(worlds / f"{name}.sdf"):
            p.changeDynamics(bodies[static], -1, mass=0.0, physicsClientId=client)
        p.performCollisionDetection(physicsClientId=client)
        deep = {(p.getBodyInfo(c[1], physicsClientId=client)[1], p.getBodyInfo(c[2], physicsClientId=client)[1])
                for c in p.getContactPoints(physicsClientId=client) if c[8] < -0.002}
        assert not deep
    finally:
        p.disconnect(client)


def test_doors_and_drawers_move_within_their_limits(worlds) -> None:
    p, client, bodies = _pybullet_world(worlds / "apartment.sdf")
    try:
        moved = 0
        for name, body in bodies.items():
            for j in range(p.getNumJoints(body, physicsClientId=client)):
                info = p.getJointInfo(body, j, physicsClientId=client)
                if info[2] not in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC):
                    continue
                lower, upper = info[8], info[9]
                p.changeDynamics(body, -1, mass=0.0, physicsClientId=client)  # hold the carcass
                opened = lower if abs(lower) > abs(upper) else upper
                closed = upper if opened == lower else lower
                # driven past the open end, then back past the closed one (left closed: out of the next one's way)
                for target, limit in ((5.0 if opened == upper else -5.0, opened), (5.0 if closed == upper else -5.0, closed)):
                    p.setJointMotorControl2(body, j, p.VELOCITY_CONTROL, targetVelocity=target, force=200,
                                            physicsClientId=client)
                    for _ in range(600):
                        p.stepSimulation(physicsClientId=client)
                    q = p.getJointState(body, j, physicsClientId=client)[0]
                    # PyBullet's limits give a little under this 200 N m drive (a microwave's door 2 degrees past)
                    assert lower - 0.05 <= q <= upper + 0.05, (name, q, lower, upper)
                    assert abs(q - limit) < 0.05, (name, q, limit)
                moved += 1
        assert moved >= 5  # the fridge, cabinets, drawer, ... of the apartment
    finally:
        p.disconnect(client)


def _read_map(yaml_path: Path) -> tuple[np.ndarray, float, tuple[float, float]]:
    """The map as map_server reads it: free where the image is light, rows from the top."""
    from PIL import Image

    meta = yaml.safe_load(yaml_path.read_text())
    image = np.asarray(Image.open(yaml_path.parent / meta["image"]))
    occupancy = (255 - image.astype(float)) / 255.0  # negate: 0
    free = occupancy < meta["free_thresh"]
    return free[::-1], float(meta["resolution"]), (float(meta["origin"][0]), float(meta["origin"][1]))


@pytest.mark.parametrize("name", SCENES)
def test_the_maps_free_space_is_collision_free_for_the_robots_footprint(worlds, name) -> None:
    """Every free cell at least a footprint radius from an occupied one (where Nav2's inflated
    costmap lets the base's centre go) holds the base, as a cylinder at its height in the PyBullet
    world, without touching anything; and that space joins every room."""
    free, resolution, origin = _read_map(worlds / f"{name}_map.yaml")
    clearance = ndimage.distance_transform_edt(free) * resolution
    centres = clearance >= FOOTPRINT_RADIUS + resolution
    p, client, bodies = _pybullet_world(worlds / f"{name}.sdf")
    try:
        for body in bodies.values():
            p.changeDynamics(body, -1, mass=0.0, physicsClientId=client)
        base = p.createMultiBody(1.0, p.createCollisionShape(p.GEOM_CYLINDER, radius=FOOTPRINT_RADIUS, height=0.36,
                                                             physicsClientId=client),
                                 basePosition=[0, 0, -5], physicsClientId=client)
        rows, cols = np.nonzero(centres)
        pick = np.random.default_rng(0).choice(len(rows), size=min(400, len(rows)), replace=False)
        for k in pick:
            x, y = origin[0] + (cols[k] + 0.5) * resolution, origin[1] + (rows[k] + 0.5) * resolution
            p.resetBasePositionAndOrientation(base, [x, y, 0.2], [0, 0, 0, 1], physicsClientId=client)
            p.performCollisionDetection(physicsClientId=client)
            touching = {p.getBodyInfo(c[2], physicsClientId=client)[1].decode()
                        for c in p.getContactPoints(bodyA=base, physicsClientId=client)} - {"ground_plane"}
            assert not touching, (x, y, touching)
        labels, _ = ndimage.label(centres)
        scene = load_scene(name)
        components = set()
        for room in scene.rooms.values():
            x0, y0, x1, y1 = room.bounds
            r0, r1 = int((y0 - origin[1]) / resolution), int((y1 - origin[1]) / resolution)
            c0, c1 = int((x0 - origin[0]) / resolution), int((x1 - origin[0]) / resolution)
            inside = labels[r0:r1, c0:c1]
            assert (inside > 0).any(), room.id
            components.add(int(np.bincount(inside[inside > 0]).argmax()))
        assert len(components) == 1, f"the rooms of {name} are not all joined for the base"
    finally:
        p.disconnect(client)


def test_a_tabletop_scene_is_refused_with_the_reason(tmp_path) -> None:
    done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "world", "export", "tabletop", "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "only household scenes" in done.stderr
    assert not list(tmp_path.iterdir())


def test_the_worlds_in_the_repository_are_what_the_scene_files_export(worlds) -> None:
    """worlds/ (installed for the Gazebo launch) is regenerated with `make worlds` when a scene changes."""
    for name in SCENES:
        for suffix in (".sdf", "_map.pgm", "_map.yaml"):
            committed = REPO / "worlds" / f"{name}{suffix}"
            assert committed.is_file() and committed.read_bytes() == (worlds / f"{name}{suffix}").read_bytes(), \
                f"{committed} is stale: run `make worlds`"


def test_a_hand_sized_pull_opens_each_drawer_without_dragging_its_cabinet(worlds) -> None:
    """As the project loads a world (world/pybullet_world.load_world), under gravity: 20 N on a
    drawer's front, outward, slides the drawer 15 cm out within a second while its cabinet stays put. (PyBullet's own
    joint motors held every drawer still, and a cabinet standing on its back panel alone tipped onto
    its drawer's front: a pull dragged the whole cabinet across the floor instead.)"""
    p = pytest.importorskip("pybullet")
    from conceptagent_ros.world.pybullet_world import load_world

    client = p.connect(p.DIRECT)
    try:
        bodies = load_world(p, worlds / "apartment.sdf", client)
        p.setGravity(0, 0, -9.81, physicsClientId=client)
        for _ in range(240):
            p.stepSimulation(physicsClientId=client)
        pulled = 0
        for name, body in sorted(bodies.items()):
            slides = [j for j in range(p.getNumJoints(body, physicsClientId=client))
                      if p.getJointInfo(body, j, physicsClientId=client)[2] == p.JOINT_PRISMATIC]
            for j in slides:
                carcass = np.asarray(p.getBasePositionAndOrientation(body, physicsClientId=client)[0])
                start = p.getJointState(body, j, physicsClientId=client)[0]
                for _ in range(240):  # until it stands 15 cm out (at its end stop, the pull takes the cabinet)
                    if p.getJointState(body, j, physicsClientId=client)[0] - start > 0.15:
                        break
                    state = p.getLinkState(body, j, physicsClientId=client)
                    outward = Rotation.from_quat(state[5]).apply([1.0, 0.0, 0.0])  # the model's +x: out of the front
                    p.applyExternalForce(body, j, (20.0 * outward).tolist(), state[0], p.WORLD_FRAME,
                                         physicsClientId=client)
                    p.stepSimulation(physicsClientId=client)
                moved = p.getJointState(body, j, physicsClientId=client)[0] - start
                shifted = np.linalg.norm(np.asarray(p.getBasePositionAndOrientation(body, physicsClientId=client)[0])
                                         - carcass)
                assert moved > 0.1, (name, moved)
                assert shifted < 0.01, (name, shifted)
                pulled += 1
        assert pulled >= 2  # the drawer and the dresser
    finally:
        p.disconnect(client)


def test_a_fridge_opens_where_its_scene_says_and_what_is_in_it_stands_on_its_shelf(worlds) -> None:
    """The studio kitchen's fridge faces -y (its scene says so: to the east the counter stands in
    front of it), its door across that side; the things in it, settled by PyBullet's physics, rest
    on a shelf 0.8 m up (within the arm's reach from outside), not on its floor."""
    p, client, bodies = _settled_world(worlds / "studio_kitchen.sdf")
    try:
        fridge = bodies["fridge_1"]
        door = p.getLinkState(fridge, 0, computeForwardKinematics=True, physicsClientId=client)
        aabb_lo, aabb_hi = p.getAABB(fridge, 0, physicsClientId=client)  # the door
        assert aabb_hi[1] - aabb_lo[1] < 0.1 and aabb_lo[1] < 4.5 - 0.3  # a thin panel across the -y side
        assert door[4][1] < 4.5 - 0.3
        for thing in ("tomato_1", "milk_1", "egg_1"):
            lo, _ = p.getAABB(bodies[thing], -1, physicsClientId=client)
            assert lo[2] == pytest.approx(0.8, abs=0.01), (thing, lo)
    finally:
        p.disconnect(client)


def test_a_wall_cabinet_hangs_on_the_wall_over_the_counter_and_stays_there(worlds) -> None:
    """The family house's kitchen cabinet is 1.6 m up in its scene (a wall unit): it hangs with its
    bottom at 1.2 m and its back on the kitchen's wall (y = 4.9), over the counter, which stands
    where its scene says with the chest of drawers under it. In the world as PyBullet loads it the
    cabinet, held by its fixed joint to the world, does not drop under gravity, the things in it
    rest on its floor, and its door swings on its hinge."""
    house = layout(load_scene("family_house"))
    cabinet, counter, chest = house["cabinet_1"], house["countertop_1"], house["drawer_1"]
    assert cabinet.center[2] - cabinet.size[2] / 2 == pytest.approx(1.2)
    assert cabinet.center[1] + cabinet.size[1] / 2 == pytest.approx(4.9)
    assert counter.center[:2] == pytest.approx((1.8, 4.4))
    assert abs(chest.center[0] - counter.center[0]) < 0.31 and abs(chest.center[1] - counter.center[1]) < 0.31
    p, client, bodies = _settled_world(worlds / "family_house.sdf")
    try:
        body = bodies["cabinet_1"]
        assert p.getBasePositionAndOrientation(body, physicsClientId=client)[0] == pytest.approx(cabinet.center,
                                                                                              abs=1e-3)
        for thing in ("plate_1", "bowl_1"):
            lo, _ = p.getAABB(bodies[thing], -1, physicsClientId=client)
            assert lo[2] == pytest.approx(1.2 + 0.03, abs=0.01), (thing, lo)
    finally:
        p.disconnect(client)
    assert _pushed_doors(worlds / "family_house.sdf")["cabinet_1"][0] >= 55


def test_what_is_in_a_chest_lies_in_its_top_drawer_and_comes_out_with_it(worlds) -> None:
    """The apartment's kitchen chest: the knife and the spoon rest on its top drawer's floor (12 cm
    under the chest's top, not on the floor of a drawer as deep as the chest is tall), in the drawer's
    front half, and the drawer pulled 30 cm out (the household body's pull) brings them out from under
    the chest's top, where a camera above sees them and a hand from above reaches them."""
    from conceptagent_ros.scene.house_geometry import PANEL, TOP_DRAWER

    p, client, bodies = _settled_world(worlds / "apartment.sdf")
    try:
        chest = bodies["drawer_1"]
        carcass_lo, carcass_hi = (np.asarray(v) for v in p.getAABB(chest, -1, physicsClientId=client))
        for thing in ("knife_1", "spoon_1"):
            lo, _ = p.getAABB(bodies[thing], -1, physicsClientId=client)
            assert lo[2] == pytest.approx(carcass_hi[2] - TOP_DRAWER + PANEL, abs=0.01), (thing, lo)
        p.setJointMotorControl2(chest, 0, p.POSITION_CONTROL, targetPosition=0.30, force=200, maxVelocity=0.15,
                                physicsClientId=client)  # as a hand pulls it
        for _ in range(960):
            p.stepSimulation(physicsClientId=client)
        assert p.getJointState(chest, 0, physicsClientId=client)[0] == pytest.approx(0.30, abs=0.01)
        state = p.getLinkState(chest, 0, physicsClientId=client)
        outward = Rotation.from_quat(state[5]).apply([1.0, 0.0, 0.0])[:2]  # out of the chest's front
        front = float(np.max(np.abs(carcass_hi[:2] - carcass_lo[:2]) / 2 * np.abs(outward)))
        middle = (carcass_lo[:2] + carcass_hi[:2]) / 2
        for thing in ("knife_1", "spoon_1"):
            centre = np.asarray(p.getBasePositionAndOrientation(bodies[thing], physicsClientId=client)[0])
            assert float((centre[:2] - middle) @ outward) > front, thing  # out past the chest's front
    finally:
        p.disconnect(client)


def test_a_scene_may_say_which_way_a_piece_faces_and_nothing_else() -> None:
    from conceptagent_ros.errors import ConceptAgentError
    from conceptagent_ros.scene.loader import scene_from_dict

    data = {"name": "s", "rooms": [{"id": "k", "category": "kitchen", "bounds": [0, 0, 4, 4]}],
            "objects": [{"id": "fridge_1", "category": "fridge", "position": [0.4, 3.6, 0.0], "faces": "-y"}]}
    scene = scene_from_dict(data)
    assert scene.objects["fridge_1"].faces == (0.0, -1.0)
    assert layout(scene)["fridge_1"].center[:2] == (0.4, 3.6)
    data["objects"][0]["faces"] = "north"
    with pytest.raises(ConceptAgentError):
        scene_from_dict(data)


@pytest.mark.parametrize("name, unit, worktop", [("studio_kitchen", "cabinet_1", "countertop_1"),
                                                 ("studio_kitchen", "drawer_1", "countertop_2"),
                                                 ("apartment", "cabinet_1", "sink_1"),
                                                 ("family_house", "cabinet_2", "sink_1")])
def test_a_cabinet_the_scene_puts_where_a_counter_stands_is_under_its_top(worlds, name, unit, worktop) -> None:
    """As in a fitted kitchen (the scene files put a cabinet, a chest or the cabinet under a sink
    where the counter or sink stands): in PyBullet, a level ray from the room at the unit's middle
    height meets the unit's front (its handle first) within 3 cm of the worktop's edge, one just
    under the worktop's top meets the worktop at its edge, and the unit stands under the top,
    within the worktop's span; not the counter before the unit's door, as these worlds had it."""
    p, client, bodies = _pybullet_world(worlds / f"{name}.sdf")
    try:
        lo, hi = (np.asarray(v) for v in p.getAABB(bodies[worktop], -1, physicsClientId=client))
        unit_lo, unit_hi = (np.asarray(v) for v in p.getAABB(bodies[unit], -1, physicsClientId=client))
        x, edge = (unit_lo[0] + unit_hi[0]) / 2, lo[1]  # these kitchens' fronts face -y
        for j in range(p.getNumJoints(bodies[unit], physicsClientId=client)):
            unit_lo = np.minimum(unit_lo, p.getAABB(bodies[unit], j, physicsClientId=client)[0])

        p.performCollisionDetection(physicsClientId=client)  # the broadphase the rays are cast in

        def first_hit(z: float) -> tuple[int, float]:
            hit = p.rayTest([x, edge - 1.0, z], [x, hi[1], z], physicsClientId=client)[0]
            return hit[0], hit[3][1]

        body, y = first_hit(unit_hi[2] / 2)
        assert body == bodies[unit] and edge - 0.04 <= y <= edge + 0.03, (body, y, edge)
        body, y = first_hit(hi[2] - 0.02)
        assert body == bodies[worktop] and y == pytest.approx(edge, abs=0.005)
        assert unit_hi[2] < hi[2] - 0.03
        assert lo[0] - 1e-3 <= unit_lo[0] and unit_hi[0] <= hi[0] + 1e-3
    finally:
        p.disconnect(client)



# doors no push opens yet, each a known defect (test_no_known_door_stays_shut says when one is mended):
# - the family house's oven, under the burners in the scene, has the second burner moved out before
#   it and meets it 3 degrees open.
BLOCKED_BY_THE_LAYOUT = {("family_house", "oven_1")}
KNOWN_SHUT = BLOCKED_BY_THE_LAYOUT


def _hinges(p: Any, bodies: dict[str, int], client: int) -> list[tuple[str, int, int]]:
    """Each hinged door of the loaded world: its model, body and revolute joint, in model order."""
    return [(model, body, j) for model, body in sorted(bodies.items())
            for j in range(p.getNumJoints(body, physicsClientId=client))
            if p.getJointInfo(body, j, physicsClientId=client)[2] == p.JOINT_REVOLUTE]


def _pushed_doors(sdf: Path) -> dict[str, tuple[float, float]]:
    """Each hinged door in the world as the project loads it, under gravity, pushed by 10 N at its
    middle square to its face for up to two seconds or until 60 degrees open: how far it swung
    (degrees) and how far its cabinet moved (metres)."""
    p = pytest.importorskip("pybullet")
    from conceptagent_ros.world.pybullet_world import load_world

    client = p.connect(p.DIRECT)
    try:
        bodies = load_world(p, sdf, client)
        p.setGravity(0, 0, -9.81, physicsClientId=client)
        for _ in range(240):
            p.stepSimulation(physicsClientId=client)
        swung: dict[str, tuple[float, float]] = {}
        for model, body, j in _hinges(p, bodies, client):
            carcass = np.asarray(p.getBasePositionAndOrientation(body, physicsClientId=client)[0])
            for _ in range(480):
                if abs(p.getJointState(body, j, physicsClientId=client)[0]) > math.radians(60):
                    break
                state = p.getLinkState(body, j, physicsClientId=client)
                square = Rotation.from_quat(state[5]).apply([1.0, 0.0, 0.0])  # out of the door's face, as it turns
                p.applyExternalForce(body, j, (10.0 * square).tolist(), state[0], p.WORLD_FRAME,
                                     physicsClientId=client)
                p.stepSimulation(physicsClientId=client)
            angle = math.degrees(abs(p.getJointState(body, j, physicsClientId=client)[0]))
            shifted = np.asarray(p.getBasePositionAndOrientation(body, physicsClientId=client)[0]) - carcass
            swung[model] = (angle, float(np.linalg.norm(shifted)))
        return swung
    finally:
        p.disconnect(client)


@pytest.mark.parametrize("name", SCENES)
def test_a_hand_sized_push_swings_each_hinged_door_open_past_what_stands_beside_it(worlds, name) -> None:
    """10 N on a door's middle swings it 55 degrees open or more, its cabinet staying put (each door
    but the known defects of KNOWN_SHUT)."""
    swung = {door: moved for door, moved in _pushed_doors(worlds / f"{name}.sdf").items()
             if (name, door) not in KNOWN_SHUT}
    assert swung, "no hinged door in the world"
    stuck = {door: (round(angle), round(shifted, 3)) for door, (angle, shifted) in swung.items()
             if angle < 55 or shifted > 0.01}
    assert not stuck, stuck


@pytest.mark.xfail(strict=True, reason="KNOWN_SHUT: the layout stands a piece before the family house's oven "
                                       "door")
@pytest.mark.parametrize("name", sorted({scene for scene, _ in KNOWN_SHUT}))
def test_no_known_door_stays_shut(worlds, name) -> None:
    swung = _pushed_doors(worlds / f"{name}.sdf")
    assert all(swung[door][0] >= 55 for scene, door in KNOWN_SHUT if scene == name)


# degrees a door is turned through in the sweep below: short of 90, where a door hung at its outer
# face's edge meets a wall flush beside its unit, as a real one does
SWEPT_TO = 80.0


def _swept_into(sdf: Path, name: str, skip: set[tuple[str, str]]) -> dict[str, tuple[str, float, float]]:
    """Each hinged door of the world (but those of `skip`) turned from shut to SWEPT_TO in steps of
    5 degrees, set, not driven (the geometry alone): for each door that passes into a wall or a piece
    of furniture by more than 2 mm, as PyBullet's collision detection measures it, what it met, at
    what angle and how deep (the things that stand on or in the furniture, which a robot would move,
    aside)."""
    p = pytest.importorskip("pybullet")
    from conceptagent_ros.world.pybullet_world import load_world

    loose = {o.id for o in load_scene(name).objects.values() if o.parent is not None}
    client = p.connect(p.DIRECT)
    try:
        bodies = load_world(p, sdf, client)
        fixed = {model: body for model, body in bodies.items() if model not in loose}
        struck: dict[str, tuple[str, float, float]] = {}
        for model, body, j in _hinges(p, bodies, client):
            if (name, model) in skip:
                continue
            struck.setdefault(model, ("", 0.0, 0.0))  # swept, nothing met yet
            # the joint's upper limit says which way it turns open
            opens = 1.0 if p.getJointInfo(body, j, physicsClientId=client)[9] > 0 else -1.0
            for degrees in np.arange(0.0, SWEPT_TO + 1e-6, 5.0):
                p.resetJointState(body, j, opens * math.radians(degrees), physicsClientId=client)
                for other, other_body in fixed.items():
                    points = [] if other_body == body else p.getClosestPoints(
                        body, other_body, 0.0, linkIndexA=j, physicsClientId=client)
                    depth = -min((pt[8] for pt in points), default=0.0)
                    if depth > 0.002 and not struck[model][0]:
                        struck[model] = (other, float(degrees), round(depth, 3))
        return struck
    finally:
        p.disconnect(client)


@pytest.mark.parametrize("name", SCENES)
def test_a_door_swings_shut_to_open_through_nothing_beside_it(worlds, name) -> None:
    """Each hinged door turned through its swing passes through no wall and no furniture (_swept_into),
    each door but the known defects of KNOWN_SHUT. A door hung on an axis through the middle of its
    thickness swung its outer edge sideways into the worktop or wall flush beside its unit (the
    studio's base unit jammed 8 degrees open); hung at its outer face's edge, none does."""
    swept = _swept_into(worlds / f"{name}.sdf", name, KNOWN_SHUT)
    assert swept, "no hinged door in the world"
    struck = {door: met for door, met in swept.items() if met[0]}
    assert not struck, struck
