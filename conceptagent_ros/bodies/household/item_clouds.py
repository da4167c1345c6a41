"""What one view of a thing leaves out, filled in: a mast camera sees a thing's near side and top,
so a grasp planner given those points alone takes the near face for a thin plate and pinches it
(the fingers close on nothing). Household things are near enough symmetric that the hidden half is
taken as the seen half turned half about the thing's vertical axis (symmetry completion, Bohg et
al., "Mind the gap", ICRA 2011).

And what the hand holds, carried with it: the points of the thing taken at the grasp, kept in the
hand's frame, put where the hand is now (an attached object, as MoveIt keeps one), for when the
camera no longer sees the thing in the hand.
"""
from __future__ import annotations

import numpy as np

UPRIGHT_FACE = 0.03  # metres: a face seen alone is upright (a front, not a top) where it stands this tall at least


def mirror_completed(points: np.ndarray, eye: np.ndarray) -> np.ndarray:
    """`points` and their image turned half about the vertical through the thing's middle, as seen
    from `eye` (world frame, metres): the two faces a camera sees of a box from a corner give the
    two it does not see. The middle is that of the points' footprint, unless the camera sees one
    face alone (its footprint is a line across the line of sight): then it lies behind that face by
    half the face's width."""
    if len(points) < 3:
        return points
    xy = points[:, :2]
    sight = xy.mean(axis=0) - np.asarray(eye, dtype=float)[:2]
    norm = float(np.linalg.norm(sight))
    if norm < 1e-6:  # seen from straight above: the top is all there is to see, and it is whole
        return points
    sight /= norm
    middle = (xy.min(axis=0) + xy.max(axis=0)) / 2
    # one upright face alone: its footprint is thin across its own length (not across the line of
    # sight: a mug's front seen obliquely, down into a cabinet, spread 3 cm along the sight and
    # stayed a face), and it stands taller than it is thin (a knife's top seen from above is thin
    # too, and flat: it has no back to add)
    _, axes = np.linalg.eigh(np.cov((xy - xy.mean(axis=0)).T))
    thin_axis, long_axis = axes[:, 0], axes[:, 1]
    thin, width = float(np.ptp(xy @ thin_axis)), float(np.ptp(xy @ long_axis))
    upright = float(np.ptp(points[:, 2])) >= max(2.0 * thin, UPRIGHT_FACE)
    if thin < 0.25 * width and upright and abs(float(thin_axis @ sight)) >= 0.5:
        away = thin_axis if float(thin_axis @ sight) > 0 else -thin_axis
        middle = xy.mean(axis=0) + away * width / 2
    turned = points.copy()
    turned[:, :2] = 2 * middle - xy
    return np.concatenate([points, turned])


def to_frame(points: np.ndarray, position: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """World points in the frame at `position` with `rotation` (3 x 3 columns: the frame's axes)."""
    return (np.asarray(points, dtype=float) - position) @ rotation


def from_frame(points: np.ndarray, position: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    return np.asarray(points, dtype=float) @ rotation.T + position
