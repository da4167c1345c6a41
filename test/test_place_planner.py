"""The place planner on hand-built receptacles: a table (empty, and cluttered), a tray with walls
(empty, with something already in it, too small), a wall with no surface, NaN points. Judged with
the test's own geometry: distances from the chosen spot to every other object, to the walls, and
whether the footprint lies on the support."""
from __future__ import annotations

import numpy as np
import pytest
from test_grasp_planner import box_surface, table

from conceptagent_ros.manipulation.failures import ManipulationError
from conceptagent_ros.manipulation.place_planner import Footprint, PlacePlanner

RADIUS, HEIGHT = 0.03, 0.06


def tray(centre=(0.5, 0.0), size=(0.20, 0.14), wall=0.04, spacing=0.005) -> np.ndarray:
    """A floor at z = 0.01 (on the table) and four walls `wall` high."""
    cx, cy = centre
    hx, hy = size[0] / 2, size[1] / 2
    xs, ys = np.arange(cx - hx, cx + hx + 1e-9, spacing), np.arange(cy - hy, cy + hy + 1e-9, spacing)
    xx, yy = np.meshgrid(xs, ys)
    floor = np.column_stack([xx.ravel(), yy.ravel(), np.full(xx.size, 0.01)])
    zs = np.arange(0.01, 0.01 + wall + 1e-9, spacing)
    walls = []
    for x in (cx - hx, cx + hx):
        yy, zz = np.meshgrid(ys, zs)
        walls.append(np.column_stack([np.full(yy.size, x), yy.ravel(), zz.ravel()]))
    for y in (cy - hy, cy + hy):
        xx, zz = np.meshgrid(xs, zs)
        walls.append(np.column_stack([xx.ravel(), np.full(xx.size, y), zz.ravel()]))
    return np.concatenate([floor, *walls])


def _footprint_clear_of(position: np.ndarray, points: np.ndarray, radius: float = RADIUS) -> float:
    """Horizontal distance from the footprint's edge to the nearest of `points` (at the object's heights)."""
    relevant = points[(points[:, 2] > position[2] - 0.005) & (points[:, 2] < position[2] + HEIGHT)]
    if len(relevant) == 0:
        return np.inf
    return float(np.linalg.norm(relevant[:, :2] - position[:2], axis=1).min() - radius)


def test_an_empty_table_takes_the_object_in_its_middle_on_its_surface() -> None:
    place = PlacePlanner().plan(RADIUS, HEIGHT, table(half=0.2, centre=(0.5, 0.0)))
    assert np.linalg.norm(place.position[:2] - np.array([0.5, 0.0])) < 0.02
    assert place.support_height == pytest.approx(0.0, abs=0.003)
    assert 0.0 < place.position[2] < 0.03 and not place.inside


def test_on_a_cluttered_table_the_spot_is_clear_of_every_object() -> None:
    clutter = [box_surface((0.5 + dx, dy, 0.03), (0.05, 0.05, 0.06)) for dx, dy in
               [(0.0, 0.0), (0.07, 0.0), (-0.07, 0.0), (0.0, 0.07), (0.0, -0.07)]]
    scene = np.concatenate(clutter)
    place = PlacePlanner().plan(RADIUS, HEIGHT, table(half=0.2, centre=(0.5, 0.0)), scene, near=(0.5, 0.0))
    assert _footprint_clear_of(place.position, scene) >= 0.009
    assert np.linalg.norm(place.position[:2] - np.array([0.5, 0.0])) < 0.2


def test_a_tray_takes_the_object_inside_below_its_rim_clear_of_its_walls() -> None:
    receptacle = tray()
    place = PlacePlanner().plan(RADIUS, HEIGHT, receptacle)
    assert place.inside and place.rim_height == pytest.approx(0.05, abs=0.006)
    assert place.support_height == pytest.approx(0.01, abs=0.003)
    assert np.abs(place.position[:2] - np.array([0.5, 0.0])).max() < 0.10 - RADIUS  # inside the walls
    walls = receptacle[receptacle[:, 2] > 0.02]
    assert _footprint_clear_of(place.position, walls) >= 0.009


def test_something_already_in_the_tray_is_left_room() -> None:
    lying = box_surface((0.5, 0.0, 0.035), (0.06, 0.06, 0.05))  # in the tray's middle
    big = tray(size=(0.30, 0.20))
    place = PlacePlanner().plan(RADIUS, HEIGHT, big, lying)
    assert place.inside
    assert _footprint_clear_of(place.position, lying) >= 0.009
    walls = big[big[:, 2] > 0.02]
    assert _footprint_clear_of(place.position, walls) >= 0.009


def test_a_tray_too_small_for_the_object_has_no_place() -> None:
    with pytest.raises(ManipulationError) as failure:
        PlacePlanner().plan(RADIUS, HEIGHT, tray(size=(0.07, 0.07)))
    assert failure.value.code == "NO_PLACE_FOUND"


def test_a_wall_is_no_support() -> None:
    ys, zs = np.meshgrid(np.arange(-0.2, 0.2, 0.01), np.arange(0.0, 0.4, 0.01))
    wall = np.column_stack([np.full(ys.size, 0.7), ys.ravel(), zs.ravel()])
    with pytest.raises(ManipulationError) as failure:
        PlacePlanner().plan(RADIUS, HEIGHT, wall)
    assert failure.value.code == "NO_SUPPORT_SURFACE"


def test_nan_points_and_an_empty_receptacle() -> None:
    noisy = np.concatenate([table(half=0.2), np.full((100, 3), np.nan)])
    assert np.isfinite(PlacePlanner().plan(RADIUS, HEIGHT, noisy).position).all()
    with pytest.raises(ManipulationError) as failure:
        PlacePlanner().plan(RADIUS, HEIGHT, np.full((100, 3), np.nan))
    assert failure.value.code == "EMPTY_CLOUD"


def test_a_surface_seen_in_grazing_rows_still_takes_the_object() -> None:
    """A shelf's top seen from a camera little above it comes in rows 3 cm apart: the rows' gaps
    are filled before the support is checked under the footprint's edge. A real gap (two boards
    15 cm apart) stays a gap: nothing is put across it."""
    xs = np.arange(0.0, 0.9, 0.004)
    rows = [np.column_stack([xs, np.full(xs.size, y), np.full(xs.size, 1.2)]) for y in np.arange(0.3, 0.7, 0.03)]
    shelf_top = np.concatenate(rows)
    place = PlacePlanner().plan(0.085, 0.02, shelf_top)
    assert 0.085 <= place.position[0] <= 0.9 - 0.085 and 0.3 + 0.07 <= place.position[1] <= 0.7 - 0.07
    assert place.support_height == pytest.approx(1.2, abs=0.003)
    boards = np.concatenate([table(half=0.05, centre=(0.5, 0.0), spacing=0.005),
                             table(half=0.05, centre=(0.5, 0.25), spacing=0.005)])
    with pytest.raises(ManipulationError) as failure:
        PlacePlanner().plan(0.08, 0.05, boards)  # 16 cm across: only a place bridging the boards would do
    assert failure.value.code == "NO_PLACE_FOUND"


def test_a_long_thing_goes_along_a_strip_no_circle_round_it_fits_in() -> None:
    """A 15 x 8 cm phone held across the strip in front of a row of things on a shelf: the circle
    round its footprint (17 cm) fits nowhere on the 10 cm strip; its rectangle fits turned along the
    strip, and the place says by how much to turn it. Judged by this test's own geometry: the turned
    rectangle's corners on the strip, clear of the row by the margin."""
    shelf = table(half=0.2, centre=(0.5, 0.0), spacing=0.005)  # 40 x 40 cm
    row = box_surface((0.5, -0.02, 0.05), (0.40, 0.24, 0.10))  # things stand on all but the front 10 cm
    seen = shelf[(shelf[:, 1] > 0.1) | (shelf[:, 1] < -0.14)]  # the row hides the top under it
    strip = seen[seen[:, 1] > 0.1]
    phone = Footprint(0.075, 0.04, np.pi / 2)  # held with its length across the strip
    with pytest.raises(ManipulationError):
        PlacePlanner().plan(0.085, 0.02, strip, row)
    place = PlacePlanner().plan(0.085, 0.02, strip, row, footprint=phone)
    assert place.turn is not None and abs(np.cos(phone.yaw + place.turn)) > 0.95  # turned along the strip (x)
    yaw = phone.yaw + place.turn
    u, v = np.array([np.cos(yaw), np.sin(yaw)]), np.array([-np.sin(yaw), np.cos(yaw)])
    corners = [place.position[:2] + su * 0.075 * u + sv * 0.04 * v for su in (-1, 1) for sv in (-1, 1)]
    assert all(0.1 - 0.012 <= c[1] <= 0.2 + 0.012 and 0.3 - 0.012 <= c[0] <= 0.7 + 0.012 for c in corners)
    assert min(c[1] for c in corners) >= 0.10 + 0.009  # clear of the row's front face at y = 0.10


def _plane(x0: float, x1: float, y0: float, y1: float, z: float, spacing: float = 0.005) -> np.ndarray:
    xx, yy = np.meshgrid(np.arange(x0, x1 + 1e-9, spacing), np.arange(y0, y1 + 1e-9, spacing))
    return np.column_stack([xx.ravel(), yy.ravel(), np.full(xx.size, z)])


def test_a_chest_drawer_takes_the_object_on_its_floor_where_it_is_pulled_out_not_on_the_chest_top() -> None:
    """A chest's top (at 0.83, x from 0.6 to 1.15) and its top drawer pulled 30 cm toward the robot
    (its floor at 0.71 from x 0.3, its front at 0.3): a mast camera sees the floor both where it is
    out and 20 cm in under the top's edge. The top is the larger level surface; the object goes on
    the floor, where nothing is above it."""
    from conceptagent_ros.manipulation.place_planner import drawer_inside

    top = _plane(0.6, 1.15, -0.25, 0.25, 0.83)
    floor = _plane(0.33, 0.8, -0.22, 0.22, 0.71)
    zs = np.arange(0.68, 0.83 + 1e-9, 0.005)
    yy, zz = np.meshgrid(np.arange(-0.25, 0.25 + 1e-9, 0.005), zs)
    front = np.column_stack([np.full(yy.size, 0.3), yy.ravel(), zz.ravel()])
    chest = np.concatenate([top, floor, front])
    whole = PlacePlanner().plan(RADIUS, HEIGHT, chest)
    assert whole.position[2] > 0.83  # what the planner makes of the whole chest: its top
    inside = drawer_inside(chest)
    spot = PlacePlanner().plan(RADIUS, HEIGHT, inside)
    assert spot.position[2] == pytest.approx(0.71 + 0.01, abs=0.005)
    assert 0.3 + RADIUS <= spot.position[0] <= 0.6 - RADIUS  # out from under the top, behind the front
    assert len(drawer_inside(tray())) == len(tray())  # nothing above a tray's floor: all its points kept


def test_a_held_things_footprint_is_its_extent_about_its_middle_however_its_points_crowd() -> None:
    """A pillow 50 x 35 cm whose points crowd one half (seen more from one side): its footprint is
    50 x 35 about its middle, not halves measured from the points' mean (55 x 44 cm, which no spot
    on the bed fitted)."""
    from conceptagent_ros.manipulation.place_executor import HeldObject

    rng = np.random.default_rng(3)
    sparse = rng.uniform([-0.25, -0.175], [0.25, 0.175], size=(200, 2))
    crowded = rng.uniform([0.05, -0.175], [0.25, 0.175], size=(2000, 2))
    xy = np.concatenate([sparse, crowded, [[-0.25, -0.175], [0.25, 0.175], [-0.25, 0.175], [0.25, -0.175]]])
    points = np.column_stack([xy + [1.0, 2.0], np.full(len(xy), 0.5)])
    held = HeldObject.from_points(points)
    assert held.footprint is not None
    sides = sorted([2 * held.footprint.half_length, 2 * held.footprint.half_width])
    assert sides == pytest.approx([0.35, 0.5], abs=0.02)
    assert held.bottom_centre[:2] == pytest.approx([1.0, 2.0], abs=0.01)
    assert held.footprint_radius == pytest.approx(np.hypot(0.25, 0.175), abs=0.01)
