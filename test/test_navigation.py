"""The embedded navigator: paths on hand-built maps judged by brute force (every point of the path at
least the base's radius from every occupied cell), named failures, approach poses that do not look
through walls, and the base driving in the exported PyBullet world, where PyBullet's collision
detection (not the planner's map) says whether it touched anything."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from conceptagent_ros.navigation.approach import approach_goal
from conceptagent_ros.navigation.errors import NavigationError
from conceptagent_ros.navigation.path_planner import PlannedPath, costmap, plan_path
from conceptagent_ros.scene.geometry import Pose2D
from conceptagent_ros.world.floor_plan import Wall
from conceptagent_ros.world.occupancy_map import OccupancyMap

RES = 0.05


def room_with_a_wall(gap: float) -> OccupancyMap:
    """A 6 x 4 m room (walls all round) split by a wall at x = 3 with a doorway `gap` wide at y = 2."""
    occupied = np.zeros((int(4 / RES), int(6 / RES)), dtype=bool)
    occupied[0, :] = occupied[-1, :] = occupied[:, 0] = occupied[:, -1] = True
    occupied[:, 59:61] = True
    half = int(round(gap / 2 / RES))
    occupied[40 - half:40 + half, 59:61] = False
    return OccupancyMap(occupied, RES, (0.0, 0.0))


def min_distance_to_obstacles(grid: OccupancyMap, points: list[tuple[float, float]]) -> float:
    rows, cols = np.nonzero(grid.occupied)
    # nearest point of each occupied cell (a square), by brute force
    lo_x, lo_y = cols * RES, rows * RES
    worst = math.inf
    for a, b in zip(points, points[1:]):
        for t in np.linspace(0.0, 1.0, max(2, int(math.dist(a, b) / 0.01))):
            x, y = a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t
            dx = np.maximum(np.maximum(lo_x - x, x - (lo_x + RES)), 0.0)
            dy = np.maximum(np.maximum(lo_y - y, y - (lo_y + RES)), 0.0)
            worst = min(worst, float(np.sqrt(dx * dx + dy * dy).min()))
    return worst


def test_a_path_goes_through_the_doorway_and_keeps_the_base_clear_of_everything() -> None:
    grid = room_with_a_wall(gap=1.0)
    path = plan_path(costmap(grid, 0.25), (1.0, 0.8), (5.0, 3.2))
    assert math.dist(path.waypoints[0], (1.0, 0.8)) < 0.05 and math.dist(path.goal, (5.0, 3.2)) < 0.05
    crossings = [a[1] + (b[1] - a[1]) * (3.0 - a[0]) / (b[0] - a[0])
                 for a, b in zip(path.waypoints, path.waypoints[1:]) if (a[0] - 3.0) * (b[0] - 3.0) <= 0 and a[0] != b[0]]
    assert len(crossings) == 1 and 1.5 < crossings[0] < 2.5  # through the doorway
    assert min_distance_to_obstacles(grid, list(path.waypoints)) >= 0.25
    straight = math.dist((1.0, 0.8), (5.0, 3.2))
    assert straight <= path.length < 1.3 * straight


def test_a_doorway_narrower_than_the_base_is_no_path() -> None:
    with pytest.raises(NavigationError) as e:
        plan_path(costmap(room_with_a_wall(gap=0.4), 0.25), (1.0, 0.8), (5.0, 3.2))
    assert e.value.code == "NO_PATH" and "nothing joins" in str(e.value)


def test_a_base_hemmed_in_by_the_costmap_backs_out_to_free_space_and_no_further() -> None:
    """A base in a channel 40 cm wide (a door opened beside a counter), its 25 cm footprint's grown
    band filling the channel, free space more than the start tolerance off: the path starts out to
    the nearest free spot; a base boxed in with no free space within 60 cm has no path."""
    grid = room_with_a_wall(gap=1.0)
    channel = grid.occupied.copy()
    channel[1:int(0.9 / RES), int(2.5 / RES)] = True  # the channel's other side: x 2.5 to 2.55, up to y = 0.9
    cm = costmap(OccupancyMap(channel, RES, (0.0, 0.0)), 0.25)
    start = (2.75, 0.7)
    path = plan_path(cm, start, (1.0, 3.2))
    assert not cm.free(*cm.grid.cell_of(*start))
    first = path.waypoints[0]
    assert cm.free(*cm.grid.cell_of(*first)) and 0.3 < math.dist(first, start) <= 0.6 + 1e-9
    boxed = np.ones_like(grid.occupied)
    boxed[int(0.5 / RES):int(0.9 / RES), int(2.55 / RES):int(2.95 / RES)] = False  # the pocket it stands in
    with pytest.raises(NavigationError) as e:
        plan_path(costmap(OccupancyMap(boxed, RES, (0.0, 0.0)), 0.25), start, (1.0, 3.2))
    assert e.value.code == "NO_PATH" and "no free space around it" in str(e.value)


def test_a_goal_inside_a_wall_beyond_tolerance_is_no_path() -> None:
    with pytest.raises(NavigationError) as e:
        plan_path(costmap(room_with_a_wall(gap=1.0), 0.25), (1.0, 0.8), (3.0, 0.5), goal_tolerance=0.1)
    assert e.value.code == "NO_PATH" and "no free spot" in str(e.value)


def test_the_approach_does_not_look_through_a_wall() -> None:
    """A box against the dividing wall on the right; the robot on the left: the base must go round
    to the right side, not stand on its own side of the wall."""
    grid = room_with_a_wall(gap=1.0)
    grid.occupied[60:72, 61:67] = True  # a 0.6 x 0.3 m box at x 3.05-3.35, y 3.0-3.6
    cm = costmap(grid, 0.25)
    wall = [Wall(2.95, 0.0, 3.05, 1.5), Wall(2.95, 2.5, 3.05, 4.0)]
    approach = approach_goal(cm, wall, (3.2, 3.3), (0.3, 0.6, 0.8), robot=(1.0, 3.3))
    pose = approach.pose
    assert pose.x > 3.05 and approach.within_reach
    assert abs(math.atan2(3.3 - pose.y, 3.2 - pose.x) - pose.yaw) < 1e-6  # facing the box


def _to_box(x: float, y: float, centre: tuple[float, float], size: tuple[float, float]) -> float:
    dx = max(abs(x - centre[0]) - size[0] / 2, 0.0)
    dy = max(abs(y - centre[1]) - size[1] / 2, 0.0)
    return math.hypot(dx, dy)


def test_the_approach_stands_off_a_long_sofas_side_not_off_the_circle_round_its_corners() -> None:
    """A 2 m x 0.9 m sofa in the right half, the robot in front of its long side: the base stops the
    standoff from that side (out of the circle through its corners it stood 0.75 m off, beyond
    the arm's reach of anything on the seat); with `side`, it goes round to that side instead."""
    grid = room_with_a_wall(gap=4.0)  # the dividing wall all doorway: one open room
    centre, size = (4.5, 3.0), (2.0, 0.9)
    grid.occupied[int(2.55 / RES):int(3.45 / RES), int(3.5 / RES):int(5.5 / RES)] = True
    cm = costmap(grid, 0.25)
    front = approach_goal(cm, [], centre, (*size, 0.45), robot=(4.5, 1.0), standoff=0.35)
    assert front.pose.y < 2.55 and _to_box(front.pose.x, front.pose.y, centre, size) == pytest.approx(0.35, abs=RES)
    beside = approach_goal(cm, [], centre, (*size, 0.45), robot=(4.5, 1.0), standoff=0.35, side=math.pi)
    assert beside.pose.x < 3.5 and _to_box(beside.pose.x, beside.pose.y, centre, size) == pytest.approx(0.35, abs=RES)


def test_another_stance_is_at_least_the_angle_asked_round_the_thing_from_the_one_that_failed() -> None:
    """The same sofa: the first stance is off its long side toward the robot. Asked for another at
    least 45 degrees round from that one, the base goes to the nearest other side that is free (an
    end of the sofa), not a few degrees along the same side; with every side but the failed one
    walled off, there is none, and the error says so."""
    grid = room_with_a_wall(gap=4.0)
    centre, size = (4.5, 3.0), (2.0, 0.9)
    grid.occupied[int(2.55 / RES):int(3.45 / RES), int(3.5 / RES):int(5.5 / RES)] = True
    cm = costmap(grid, 0.25)
    first = approach_goal(cm, [], centre, (*size, 0.45), robot=(4.5, 1.0), standoff=0.35).pose
    failed = math.atan2(first.y - centre[1], first.x - centre[0])
    other = approach_goal(cm, [], centre, (*size, 0.45), robot=(4.5, 1.0), standoff=0.35,
                          away_from=(failed, math.radians(45))).pose
    heading = math.atan2(other.y - centre[1], other.x - centre[0])
    assert abs(math.remainder(heading - failed, 2 * math.pi)) >= math.radians(45) - 1e-6
    assert other.x < 3.5 or other.x > 5.5 or other.y > 3.45  # off an end or the far side, not the near side
    assert abs(math.atan2(centre[1] - other.y, centre[0] - other.x) - other.yaw) < 1e-6  # facing the sofa
    # everything but a corridor straight in front of the near side is taken: no other stance exists
    grid.occupied[int(2.2 / RES):, :] = True
    grid.occupied[:, :int(4.2 / RES)] = grid.occupied[:, int(4.8 / RES):] = True
    walled = costmap(grid, 0.25)
    with pytest.raises(NavigationError, match="other than the one that failed"):
        approach_goal(walled, [], centre, (*size, 0.45), robot=(4.5, 1.0), standoff=0.35,
                      away_from=(failed, math.radians(45)))


def test_unknown_failure_codes_are_refused() -> None:
    with pytest.raises(ValueError):
        NavigationError("LOST", "nowhere")


@pytest.fixture
def kitchen():  # noqa: ANN201 - (base, costmap, plan, boxes)
    pytest.importorskip("pybullet")
    pytest.importorskip("skimage")
    import tempfile
    from pathlib import Path

    from conceptagent_ros.navigation.pybullet_base import PyBulletBase
    from conceptagent_ros.scene.geometry import Pose2D
    from conceptagent_ros.scene.loader import load_scene
    from conceptagent_ros.world.export import export_world
    from conceptagent_ros.world.house import house
    from conceptagent_ros.world.robot_description import FOOTPRINT_RADIUS
    from conceptagent_ros.world.spawn import start_pose

    home = house(load_scene("studio_kitchen"))
    cm = costmap(home.grid, FOOTPRINT_RADIUS + 0.04)
    sdf = export_world(home, Path(tempfile.mkdtemp())).sdf
    base = PyBulletBase(sdf, Pose2D(*start_pose(home)))
    yield base, cm, home.plan, home.boxes
    base.close()


def test_the_base_drives_to_the_sink_touching_nothing(kitchen) -> None:
    base, cm, plan, boxes = kitchen
    sink = boxes["sink_1"]
    goal = approach_goal(cm, plan.walls, sink.center[:2], sink.size, (base.pose.x, base.pose.y)).pose
    path = plan_path(cm, (base.pose.x, base.pose.y), (goal.x, goal.y))
    result = base.drive(path, goal.yaw)
    assert result.reached, result.message
    assert math.dist((result.pose.x, result.pose.y), (goal.x, goal.y)) < 0.1
    assert abs(math.remainder(result.pose.yaw - goal.yaw, 2 * math.pi)) < 0.15
    assert not base.touching()
    assert result.travelled >= path.length - 0.1


def test_something_on_the_way_that_the_map_does_not_have_blocks_the_base(kitchen) -> None:
    base, cm, plan, boxes = kitchen
    p, client = base.p, base.client
    sink = boxes["sink_1"]
    goal = approach_goal(cm, plan.walls, sink.center[:2], sink.size, (base.pose.x, base.pose.y)).pose
    path = plan_path(cm, (base.pose.x, base.pose.y), (goal.x, goal.y))
    a, b = path.waypoints[0], path.waypoints[1]
    middle = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    crate = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.15, 0.15, 0.2], physicsClientId=client)
    p.createMultiBody(0, crate, basePosition=[middle[0], middle[1], 0.2], physicsClientId=client)
    result = base.drive(path, goal.yaw)
    assert not result.reached and result.code == "BLOCKED" and "touched" in result.message
    assert math.dist((result.pose.x, result.pose.y), middle) < 0.15 + 0.22 + 0.05


def _to_the_sink(kitchen):  # noqa: ANN001, ANN202 - the fixture's tuple; (path, goal, first leg's ends, its direction)
    """The planned path from where the base stands to its approach to the sink, and its first leg."""
    base, cm, plan, boxes = kitchen
    sink = boxes["sink_1"]
    goal = approach_goal(cm, plan.walls, sink.center[:2], sink.size, (base.pose.x, base.pose.y)).pose
    path = plan_path(cm, (base.pose.x, base.pose.y), (goal.x, goal.y))
    a, b = np.asarray(path.waypoints[0]), np.asarray(path.waypoints[1])
    return path, goal, (a, b), (b - a) / np.linalg.norm(b - a)


def test_a_base_that_starts_touching_something_backs_away_and_drives(kitchen) -> None:
    """A crate against the base's back as a drive starts (a drive stopped there, or an arm's work
    left the base there): the base backs off it along the contact, then drives; a base left in
    contact was stopped on the first step of every drive."""
    base = kitchen[0]
    p, client = base.p, base.client
    start = base.pose
    path, goal, (a, b), along = _to_the_sink(kitchen)
    at = np.array([start.x, start.y]) - along * (0.22 + 0.1 - 0.01)  # 1 cm into the base, behind it
    crate = p.createMultiBody(0, p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.1, 0.1, 0.2], physicsClientId=client),
                              basePosition=[float(at[0]), float(at[1]), 0.2], physicsClientId=client)
    try:
        assert base.touching() == {f"body {crate}"}
        result = base.drive(path, goal.yaw)
        assert result.reached, result.message
        assert not base.touching()
    finally:
        p.removeBody(crate, physicsClientId=client)


def test_what_the_hand_carries_striking_something_stops_the_drive(kitchen) -> None:
    """The base clears a crate beside its path, but a pole carried across it does not: the drive
    stops with CARRY_COLLISION and names what was struck."""
    base = kitchen[0]
    p, client = base.p, base.client
    start = base.pose
    path, goal, (a, b), along = _to_the_sink(kitchen)
    left = np.array([-along[1], along[0]])
    beside = (a + b) / 2 + left * 0.45  # its near face 35 cm from the path: the base (22 cm) clears it
    crate = p.createMultiBody(0, p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.1, 0.1, 0.4], physicsClientId=client),
                              basePosition=[beside[0], beside[1], 0.4], physicsClientId=client)
    # a held thing has mass (PyBullet finds no contact between two bodies of none)
    pole = p.createMultiBody(0.1, p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.01, 0.3, 0.01], physicsClientId=client),
                             basePosition=[0, 0, -5], physicsClientId=client)

    def carry() -> None:  # held out 30-60 cm to the base's left, at the crate's height
        pose = base.pose
        side = np.array([-math.sin(pose.yaw), math.cos(pose.yaw)])
        middle = np.array([pose.x, pose.y]) + side * 0.45
        p.resetBasePositionAndOrientation(pole, [middle[0], middle[1], 0.5],
                                          p.getQuaternionFromEuler([0, 0, pose.yaw]), physicsClientId=client)

    base.place(Pose2D(start.x, start.y, math.atan2(along[1], along[0])))  # facing along the path: no turn first
    carry()
    try:
        result = base.drive(path, goal.yaw, carried=[pole], carry=carry)
        assert not result.reached and result.code == "CARRY_COLLISION", result
        assert f"body {crate}" in result.message
    finally:
        p.removeBody(crate, physicsClientId=client)
        p.removeBody(pole, physicsClientId=client)
        base.place(start)


def test_a_drive_that_takes_too_long_times_out(kitchen) -> None:
    base, cm, plan, boxes = kitchen
    fridge = boxes["fridge_1"]
    goal = approach_goal(cm, plan.walls, fridge.center[:2], fridge.size, (base.pose.x, base.pose.y)).pose
    path = plan_path(cm, (base.pose.x, base.pose.y), (goal.x, goal.y))
    result = base.drive(path, goal.yaw, timeout=1.0)
    assert not result.reached and result.code == "TIMEOUT"


def test_the_navigation_bench_drives_to_every_object_of_a_scene(tmp_path) -> None:
    pytest.importorskip("pybullet")
    pytest.importorskip("skimage")
    # ideal: to every object's true box with the true pose (the default, realistic, drives to what is seen)
    done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "bench", "--suite", "navigation", "--body",
                           "pybullet", "--sensing", "ideal", "--scene", "studio_kitchen", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    import json

    results = json.loads((tmp_path / "results.json").read_text())
    figures = results["all"]
    assert figures["drives"] == 31 and figures["success_rate"] >= 0.9
    # the report's command reruns what was run: without --sensing ideal the perceived bench would run
    assert results["command"].endswith("--scene studio_kitchen --sensing ideal")
    assert (tmp_path / "episodes.csv").read_text().count("\n") == 32
    refused = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "bench", "--suite", "navigation"],
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--body pybullet" in refused.stderr


def test_the_perceived_navigation_bench_drives_to_things_as_seen_and_judges_reach_on_the_truth() -> None:
    """--sensing realistic: the body drives to each thing as its camera saw it, by localization's
    estimate; the apple on the counter is reached and, by PyBullet's own box of it, within the
    arm's reach; the milk shut in the fridge is never seen, and is counted apart, not as a drive."""
    pytest.importorskip("pybullet")
    pytest.importorskip("open3d")
    from conceptagent_ros.evaluation.navigation_bench import NOT_SEEN, run_perceived_navigation_scene, summary

    episodes = {e.target: e for e in run_perceived_navigation_scene("studio_kitchen", targets=["apple_1", "milk_1"])}
    apple, milk = episodes["apple_1"], episodes["milk_1"]
    assert apple.success and apple.within_reach, apple.message
    assert 0.0 <= apple.object_distance <= 0.9 and apple.path_length > 0.3
    assert 0.0 < apple.localization_error < 0.1  # the estimate is near the truth, but is not the truth
    assert milk.code == NOT_SEEN and not milk.success
    figures = summary(list(episodes.values()))
    assert figures["drives"] == 1 and figures["not_seen"] == 1 and figures["reached"] == 1


def test_the_obstacle_layer_marks_what_the_lidar_hits_and_clears_what_it_sees_through() -> None:
    """A crate the map lacks is marked where the beams end on it; swept again with the crate gone,
    the beams pass through and clear it; the map's own walls are never cleared, and a hit on a
    wall's face is the wall, not a new obstacle beside it."""
    from conceptagent_ros.navigation.obstacle_layer import ObstacleLayer

    grid = room_with_a_wall(gap=1.0)
    layer = ObstacleLayer(grid)
    angles = np.linspace(-0.3, 0.3, 31)
    origin = (1.0, 2.0)
    on_crate = np.column_stack([np.full(31, 2.0), 2.0 + np.tan(angles) * 1.0])  # a crate's face at x = 2
    layer.update(origin, on_crate, np.ones(31, dtype=bool))
    row, col = grid.cell_of(2.0, 2.0)
    assert layer.occupancy().occupied[row, col] and not grid.occupied[row, col]
    walled = costmap(layer.occupancy(), 0.25)
    assert not walled.free(*grid.cell_of(1.9, 2.0))  # the base keeps its radius off the crate
    through = np.column_stack([np.full(31, 2.8), 2.0 + np.tan(angles) * 1.8])  # nothing there now
    layer.update(origin, through, np.zeros(31, dtype=bool))
    assert not layer.occupancy().occupied[row, col]
    before_wall = grid.cell_of(2.94, 1.0)  # a beam ending on the dividing wall's face, a centimetre short
    layer.update(origin, np.array([[2.94, 1.0]]), np.ones(1, dtype=bool))
    assert not layer.marked[before_wall]  # the map's wall, seen: it does not narrow the passage beside it
    wall_row, wall_col = grid.cell_of(3.0, 0.5)
    layer.update((2.0, 0.5), np.array([[3.5, 0.5]]), np.zeros(1, dtype=bool))  # a beam "through" the wall
    assert layer.occupancy().occupied[wall_row, wall_col]


def test_the_body_drives_round_a_crate_the_map_does_not_have(tmp_path) -> None:
    """The household body on its way to the apple: a crate stands on the middle of the path the map
    alone gives. The lidar's sweep before the drive marks it, the path goes round, and the base
    arrives touching nothing."""
    pytest.importorskip("pybullet")
    pytest.importorskip("open3d")
    from conceptagent_ros.bodies.household.body import HouseholdBody
    from conceptagent_ros.scene.loader import load_scene
    from conceptagent_ros.skills.contract import SkillCall

    body = HouseholdBody(load_scene("studio_kitchen"))
    try:
        p, c = body.p, body.client
        start = body.base.believed
        goal = body.stance.approach("apple_1").pose
        waypoints = plan_path(body.stance.costmap, (start.x, start.y), (goal.x, goal.y)).waypoints
        middle = waypoints[len(waypoints) // 2]
        crate = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.15, 0.15, 0.3], physicsClientId=c)
        p.createMultiBody(0, crate, basePosition=[middle[0], middle[1], 0.3], physicsClientId=c)
        moved = body.execute(SkillCall("navigate_to", ("apple_1",)))
        assert moved.success, moved.message
        assert min(math.dist(middle, w) for w in body.last_path) > 0.15 + 0.22
    finally:
        body.close()


def test_a_path_of_one_point_a_few_centimetres_off_is_driven(kitchen) -> None:
    """The planner gives a path of the start alone where the goal is within its tolerance of it; the
    drive's own tolerance is tighter, so it still has the last centimetres to go (a path of one point
    once ended an evaluation run with an IndexError)."""
    base, cm, plan, boxes = kitchen
    start = base.pose
    goal = (start.x + 0.08, start.y)
    try:
        result = base.drive(PlannedPath(((goal[0], goal[1]),), 0.0), start.yaw)
        assert result.reached, result.message
        assert math.dist((result.pose.x, result.pose.y), goal) < 0.05
    finally:
        base.place(start)
