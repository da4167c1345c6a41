"""The hand's frame, shared by every manipulation planner: columns x (the fingers close along it),
y (along a finger's width) and z (the approach, from the palm toward what is held)."""
from __future__ import annotations

import numpy as np


def hand_frame(approach: np.ndarray, closing: np.ndarray) -> np.ndarray:
    """3 x 3 rotation with z along `approach` and x along `closing` made perpendicular to it."""
    z = np.asarray(approach, dtype=float)
    z = z / np.linalg.norm(z)
    x = np.asarray(closing, dtype=float) - z * float(np.asarray(closing, dtype=float) @ z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


AXES = {"x": 0, "y": 1, "z": 2}


def parse_tool_axes(axes: tuple[str, str, str] | list[str]) -> np.ndarray:
    """How an arm's tool link sits on the hand frame, as the hand-frame axis each tool axis lies
    along: the Panda's grasp target link is ("-y", "x", "z") (its fingers move along its y, it points
    along its z). A 3 x 3 matrix M with tool_rotation = hand_rotation @ M."""
    if len(axes) != 3:
        raise ValueError(f"tool axes are three of x, y, z (each may be negated); got {list(axes)}")
    m = np.zeros((3, 3))
    for column, axis in enumerate(axes):
        text = str(axis).strip()
        sign = -1.0 if text.startswith("-") else 1.0
        name = text.lstrip("+-")
        if name not in AXES:
            raise ValueError(f"tool axis {axis!r} is not one of x, y, z (each may be negated)")
        m[AXES[name], column] = sign
    if abs(abs(np.linalg.det(m)) - 1.0) > 1e-9 or np.linalg.det(m) < 0:
        raise ValueError(f"tool axes {list(axes)} do not form a right-handed frame")
    return m


def tool_rotation(hand_rotation: np.ndarray, tool_axes: np.ndarray) -> np.ndarray:
    """The tool link's rotation for a hand frame (tool_axes from parse_tool_axes)."""
    return np.asarray(hand_rotation, dtype=float) @ tool_axes
