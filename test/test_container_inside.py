"""Where a thing put into a container with a door goes: its inside, not its top. The points are
built here box by box; the judge is this file's arithmetic (which height the spot is at)."""
from __future__ import annotations

import numpy as np

from conceptagent_ros.bodies.household.sight import inside_of
from conceptagent_ros.manipulation.place_planner import PlacePlanner


def _face(x: tuple[float, float], y: tuple[float, float], z: tuple[float, float], spacing: float = 0.01) -> np.ndarray:
    """Points on an axis-aligned rectangle (one of x, y, z is a single value)."""
    axes = [np.arange(a, b + 1e-9, spacing) if b > a else np.array([a]) for a, b in (x, y, z)]
    grid = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([g.ravel() for g in grid])


def _open_box(bottom: float, height: float, width: float = 0.5, depth: float = 0.4, panel: float = 0.03) -> np.ndarray:
    """A box with its door open toward -y, as a camera above and before it sees it: its top, its
    inner floor, its back and sides inside."""
    top = bottom + height
    floor = bottom + panel
    return np.concatenate([
        _face((0.0, width), (0.0, depth), (top, top)),  # the top panel, seen from above
        _face((panel, width - panel), (0.0, depth - panel), (floor, floor)),  # the inner floor
        _face((panel, width - panel), (depth - panel, depth - panel), (floor, top - panel)),  # the back inside
        _face((panel, panel), (0.0, depth - panel), (floor, top - panel)),  # the sides inside
        _face((width - panel, width - panel), (0.0, depth - panel), (floor, top - panel)),
    ])


def test_a_thing_put_into_a_microwave_goes_on_its_floor_not_its_top() -> None:
    """A microwave on a counter (its bottom 0.9 m up, 30 cm tall) seen from an eye at 1.45 m: its top
    is the largest level face; planned on all its points the bread goes onto the top, planned on its
    inside onto the floor, 3 cm above its bottom."""
    microwave = _open_box(0.9, 0.3)
    on_top = PlacePlanner().plan(0.05, 0.08, microwave)
    assert abs(on_top.position[2] - 1.2) < 0.03  # the defect: the whole box's largest plane is its top
    inside = PlacePlanner().plan(0.05, 0.08, inside_of(microwave, 1.45))
    assert abs(inside.position[2] - 0.93) < 0.03


def test_a_fridge_seen_from_below_its_top_keeps_its_shelf() -> None:
    """A fridge's top above the eye is not seen from above: what goes in stands on what is level inside
    below the eye, and the band under the highest point seen takes nothing level away."""
    fridge = _open_box(0.0, 1.8, width=0.7, depth=0.7)
    shelf = _face((0.03, 0.67), (0.0, 0.67), (0.8, 0.8))
    points = np.concatenate([fridge, shelf])
    kept = inside_of(points, 1.4)
    assert kept[:, 2].max() < 1.4
    spot = PlacePlanner().plan(0.05, 0.08, kept)
    assert abs(spot.position[2] - 0.8) < 0.03


def test_a_container_seen_in_its_top_alone_is_left_as_seen() -> None:
    """Where nothing lies under the top panel's band (the door shut: its top alone seen), the points
    are those below the eye, not none."""
    top_only = _face((0.0, 0.5), (0.0, 0.4), (1.2, 1.2))
    assert len(inside_of(top_only, 1.45)) == len(top_only)
    assert len(inside_of(top_only, 1.0)) == 0  # above the eye: nothing to put a thing on
