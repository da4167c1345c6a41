"""The embedded camera's paint detector: the synthetic RGB-D camera (sim/rgbd_camera.py) paints
each kind of thing in its own colour, whatever the shading; this finds the vocabulary's kinds as
connected blobs of their paint. It stands in for a network detector where the embedded world's
frames travel as plain sensor_msgs/Image (which carry no instance ids for the oracle): the
robot stand-in's camera over ROS, and recordings of it."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conceptagent_ros.perception.detections import Detection
from conceptagent_ros.perception.frames import Frame


def category_colour(category: str) -> np.ndarray:
    """The paint a simulator gives a kind of thing (stable across runs): the embedded camera
    (sim/rgbd_camera.py) paints with it, this detector reads it back."""
    h = 7
    for ch in category:
        h = (h * 257 + ord(ch)) % 2_147_483_647
    rng = np.random.default_rng(h)
    return (40 + 200 * rng.random(3)).astype(np.float32)


class SimPaintDetector:
    def __init__(self, min_pixels: int = 30, max_angle_deg: float = 2.0):
        self.min_pixels = min_pixels
        self.cos_limit = float(np.cos(np.radians(max_angle_deg)))

    def detect(self, frame: Frame, vocabulary: Sequence[str]) -> list[Detection]:
        from scipy import ndimage

        rgb = frame.rgb.astype(np.float32)
        norm = np.linalg.norm(rgb, axis=2)
        unit = rgb / np.maximum(norm, 1e-6)[..., None]
        found = []
        for label in vocabulary:
            paint = category_colour(label.strip().replace(" ", "_"))
            paint = paint / np.linalg.norm(paint)
            blobs, count = ndimage.label((unit @ paint >= self.cos_limit) & (norm > 20))
            if count == 0:
                continue
            sizes = np.bincount(blobs.ravel(), minlength=count + 1)
            for index in np.flatnonzero(sizes >= self.min_pixels):
                if index == 0:
                    continue
                mask = blobs == index
                rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
                found.append(Detection(label, 0.9, (float(cols[0]), float(rows[0]), float(cols[-1] + 1),
                                                    float(rows[-1] + 1)), mask=mask))
        return found
