"""A detector plugin for the bag tests: finds things by the paint the synthetic camera gives each
kind (sim/rgbd_camera.category_colour), whatever the shading, as connected blobs. It knows colours
only; where things are in 3D, and what the map makes of them, is the pipeline's business."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conceptagent_ros.perception.detections import Detection
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.sim.rgbd_camera import category_colour


class ColourBlobDetector:
    def __init__(self, min_pixels: int = 40, max_angle_deg: float = 2.0):
        self.min_pixels = min_pixels
        self.cos_limit = float(np.cos(np.radians(max_angle_deg)))

    def detect(self, frame: Frame, vocabulary: Sequence[str]) -> list[Detection]:
        from scipy import ndimage

        rgb = frame.rgb.astype(np.float32)
        norm = np.linalg.norm(rgb, axis=2)
        unit = rgb / np.maximum(norm, 1e-6)[..., None]
        out = []
        for label in vocabulary:
            paint = category_colour(label.replace(" ", "_"))
            paint = paint / np.linalg.norm(paint)
            hit = (unit @ paint >= self.cos_limit) & (norm > 20)
            blobs, count = ndimage.label(hit)
            for index in range(1, count + 1):
                mask = blobs == index
                if mask.sum() < self.min_pixels:
                    continue
                rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
                out.append(Detection(label, 0.9, (float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1)),
                                     mask=mask))
        return out
