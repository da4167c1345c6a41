"""What each stage of the frame pipeline hands to the next, and the Protocols at its seams."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from conceptagent_ros.perception.frames import Frame


@dataclass
class Detection:
    """One thing found in an image. Stages fill in what they add: the detector a label, a score
    and a box; the segmenter a mask; the embedder an embedding."""

    label: str
    score: float
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels
    mask: np.ndarray | None = None  # H x W bool
    embedding: np.ndarray | None = None  # unit vector
    # What a simulator knows and a camera does not (the oracle detector's instance id and the
    # object's state flags). Fusion never associates by them; they name and describe objects only.
    instance_hint: str | None = None
    state: dict[str, bool] = field(default_factory=dict)


class Detector(Protocol):
    """Open-vocabulary detection: the vocabulary comes with each call (per query or per frame).
    Network detectors read the frame's RGB; the oracle reads a simulator's instance ids."""

    def detect(self, frame: Frame, vocabulary: Sequence[str]) -> list[Detection]: ...


class Segmenter(Protocol):
    """Masks for detections (box prompts), written into each detection's `mask`."""

    def segment(self, rgb: np.ndarray, detections: list[Detection]) -> list[Detection]: ...


class Embedder(Protocol):
    """A joint image-text space (CLIP): masked crops and query texts map to comparable unit vectors."""

    def embed_images(self, crops: Sequence[np.ndarray]) -> np.ndarray: ...

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray: ...


def box_mask(shape: tuple[int, int], box: tuple[float, float, float, float]) -> np.ndarray:
    """The box itself as a mask: what a pipeline without a segmenter uses."""
    h, w = shape
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    mask = np.zeros((h, w), dtype=bool)
    mask[max(0, y0):min(h, y1), max(0, x0):min(w, x1)] = True
    return mask


def masked_crop(rgb: np.ndarray, mask: np.ndarray | None, box: tuple[float, float, float, float],
                background: int = 127, pad: float = 0.1) -> np.ndarray:
    """The detection's crop with everything outside its mask greyed out (what CLIP embeds)."""
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = box
    px, py = (x1 - x0) * pad, (y1 - y0) * pad
    c0, r0 = max(0, int(x0 - px)), max(0, int(y0 - py))
    c1, r1 = min(w, int(np.ceil(x1 + px))), min(h, int(np.ceil(y1 + py)))
    if c1 <= c0 or r1 <= r0:
        return np.full((1, 1, 3), background, dtype=np.uint8)
    crop = rgb[r0:r1, c0:c1].copy()
    if mask is not None:
        crop[~mask[r0:r1, c0:c1]] = background
    return crop


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)
