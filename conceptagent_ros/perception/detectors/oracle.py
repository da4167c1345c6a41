"""The oracle detector: reads a simulator's per-pixel instance ids instead of looking at colours.
It stands where a network detector would, so the rest of the pipeline (geometry, fusion, the
graph) is measured on its own; it gives exact masks, so no segmenter is needed behind it."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from conceptagent_ros.perception.detections import Detection
from conceptagent_ros.perception.frames import Frame


class OracleDetector:
    def __init__(self, category_of: Callable[[str], str], state_of: Callable[[str], dict[str, bool]] | None = None,
                 min_pixels: int = 30):
        self.category_of = category_of
        self.state_of = state_of
        self.min_pixels = min_pixels

    def detect(self, frame: Frame, vocabulary: Sequence[str]) -> list[Detection]:
        if frame.instance_ids is None:
            raise ValueError("the oracle detector needs a simulated frame (instance ids); use a network detector on "
                             "real images")
        ids = frame.instance_ids
        wanted = {v.strip().lower() for v in vocabulary if v.strip()}
        counts = np.bincount(ids[ids >= 0].ravel(), minlength=len(frame.instance_names))
        detections = []
        for index in np.flatnonzero(counts >= self.min_pixels):
            name = frame.instance_names[index]
            label = self.category_of(name)
            if wanted and label.replace("_", " ") not in wanted and label not in wanted:
                continue
            mask = ids == index
            rows = np.flatnonzero(mask.any(axis=1))
            cols = np.flatnonzero(mask.any(axis=0))
            box = (float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1))
            state = dict(self.state_of(name)) if self.state_of is not None else {}
            detections.append(Detection(label=label, score=1.0, box=box, mask=mask, instance_hint=name, state=state))
        return detections
