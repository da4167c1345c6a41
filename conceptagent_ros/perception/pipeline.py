"""The frame pipeline: RGB-D + intrinsics + camera pose -> detections -> masks -> embeddings ->
3D objects -> map update, each stage timed."""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from conceptagent_ros.perception.detections import Detection, Detector, Embedder, Segmenter, box_mask, masked_crop, normalize_rows
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.fusion import Detection3D, FusionStats, ObjectMap
from conceptagent_ros.perception.geometry import DEFAULT_GEOMETRY, GeometryConfig, object_points

STAGES = ("detect", "segment", "embed", "geometry", "fusion")
UNLABELLED = "object"  # what automatic masks are called until CLIP names them


@dataclass(frozen=True)
class LiftedDetection:
    """What a node publishes of a detection: its label, score, pixel box and 3D centroid."""

    label: str
    score: float
    box: tuple[float, float, float, float]
    centroid: tuple[float, float, float] | None


@dataclass
class FrameReport:
    detections: int
    objects: int
    fusion: FusionStats
    seconds: dict[str, float] = field(default_factory=dict)
    last_detections: list[LiftedDetection] = field(default_factory=list)


class FramePipeline:
    def __init__(self, detector: Detector, object_map: ObjectMap, segmenter: Segmenter | None = None,
                 embedder: Embedder | None = None, geometry: GeometryConfig = DEFAULT_GEOMETRY,
                 vocabulary: Sequence[str] = ()):
        self.detector = detector
        self.segmenter = segmenter
        self.embedder = embedder
        self.geometry = geometry
        self.map = object_map
        self.vocabulary = list(vocabulary)
        self._text_cache: dict[tuple[str, ...], np.ndarray] = {}

    def process(self, frame: Frame, vocabulary: Sequence[str] | None = None) -> FrameReport:
        seconds: dict[str, float] = {}
        t = time.perf_counter()
        detections = self.detector.detect(frame, self.vocabulary if vocabulary is None else vocabulary)
        seconds["detect"] = time.perf_counter() - t
        t = time.perf_counter()
        if self.segmenter is not None and detections:
            detections = self.segmenter.segment(frame.rgb, detections)
        for det in detections:
            if det.mask is None:
                det.mask = box_mask(frame.depth.shape, det.box)
        seconds["segment"] = time.perf_counter() - t
        t = time.perf_counter()
        if self.embedder is not None and detections:
            crops = [masked_crop(frame.rgb, d.mask, d.box) for d in detections]
            vectors = normalize_rows(self.embedder.embed_images(crops))
            for det, vec in zip(detections, vectors, strict=True):
                det.embedding = vec.astype("float32")
            self._label_unlabelled(detections, vocabulary if vocabulary is not None else self.vocabulary)
        seconds["embed"] = time.perf_counter() - t
        report = self.integrate(frame, detections)
        report.seconds.update(seconds)
        return report

    def _label_unlabelled(self, detections: list[Detection], vocabulary: Sequence[str]) -> None:
        """Automatic masks come without labels: each takes the vocabulary entry its crop is most
        like in CLIP's space (ConceptAgent's mode)."""
        todo = [d for d in detections if d.label == UNLABELLED and d.embedding is not None]
        if not todo or not vocabulary or self.embedder is None:
            return
        key = tuple(vocabulary)
        if key not in self._text_cache:
            self._text_cache = {key: normalize_rows(self.embedder.embed_texts([f"a photo of a {v}" for v in vocabulary]))}
        text = self._text_cache[key]
        sims = np.stack([d.embedding for d in todo]) @ text.T  # type: ignore[misc]
        for det, row in zip(todo, sims, strict=True):
            det.label = vocabulary[int(row.argmax())]

    def integrate(self, frame: Frame, detections: list[Detection]) -> FrameReport:
        """The stages after the networks: geometry and fusion (what the fusion benchmark times)."""
        t = time.perf_counter()
        lifted = []
        summaries = []
        for det in detections:
            if det.mask is None:
                continue
            points = object_points(frame, det.mask, self.geometry)
            centroid = tuple(float(v) for v in points.mean(axis=0)) if points.shape[0] else None
            summaries.append(LiftedDetection(det.label, det.score, det.box, centroid))  # type: ignore[arg-type]
            lifted.append(Detection3D(det.label, det.score, points, det.embedding, det.instance_hint, det.state,
                                      downsampled_at=self.geometry.voxel))
        geometry_s = time.perf_counter() - t
        t = time.perf_counter()
        stats = self.map.integrate(lifted, frame)
        fusion_s = time.perf_counter() - t
        return FrameReport(len(detections), len(self.map.objects), stats, {"geometry": geometry_s, "fusion": fusion_s},
                           summaries)
