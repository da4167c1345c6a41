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
