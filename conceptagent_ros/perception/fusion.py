"""The live 3D object map: detections of each frame fused into objects while the robot moves.

After ConceptGraphs (Gu et al. 2024): a detection joins the object it overlaps most in space and
resembles most in its embedding, or starts a new object; merging keeps each object's points
voxel-bounded, a running embedding, how often it was detected and when it was last seen. Unlike
ConceptGraphs, which builds its map offline at about a frame a second, everything here is
incremental and cheap enough for camera rate: overlap is counted on packed voxel keys, only objects
whose boxes come near a detection are compared, and an object that should be in view and keeps
being missed loses confidence and goes.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.geometry import OrientedBox, gravity_aligned_box, voxel_downsample, voxel_keys


@dataclass(frozen=True)
class FusionConfig:
    voxel: float = 0.02  # metres: an object's points are kept one per voxel
    overlap_voxel: float = 0.05  # coarser cells in which overlap is counted (tolerates a few cm of pose error)
    max_points: int = 4000  # per object, after voxel downsampling
    min_spatial: float = 0.25  # share of a detection's cells that must fall in the object's cells
    touching: float = 0.03  # metres: boxes of one label closer than this are faces of one thing...
    big: float = 0.6  # ...if together they span this much (furniture, seen a face at a time)...
    face: float = 0.1  # ...and one of them is this thin (one face of it): two pillows side by side stay two
    visual_weight: float = 1.0  # similarity = spatial + visual_weight * cosine(embeddings)
    min_similarity: float = 1.1  # ConceptGraphs' threshold on spatial + visual
    # Without embeddings the label stands in for appearance: 1 when equal, this when not (so a
    # mislabelled glimpse joins an object only where it overlaps it almost wholly).
    other_label_similarity: float = 0.0
    merge_overlap: float = 0.6  # two objects sharing this much (of the smaller) are one...
    merge_min_visual: float = 0.75  # ...if their embeddings agree this well (or their labels are equal)
    max_misses: int = 4  # times the camera may see through an object's place in a row before it goes
    see_through: float = 0.05  # metres: depth measured this far beyond an object's centre = it is not there
    view_margin: int = 8  # pixels: a centroid this close to the image border is not surely in view


def box_gap(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """Distance between two axis-aligned boxes along the axis where they are furthest apart (0 when
    they overlap)."""
    return float(np.max(np.maximum(np.maximum(a[0] - b[1], b[0] - a[1]), 0.0)))


def box_overlap_of_smaller(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], margin: float) -> float:
    """Intersection of two axis-aligned boxes (each grown by margin) over the smaller one's volume."""
    alo, ahi = a[0] - margin, a[1] + margin
    blo, bhi = b[0] - margin, b[1] + margin
    inter = np.clip(np.minimum(ahi, bhi) - np.maximum(alo, blo), 0.0, None).prod()
    smaller = min(float(np.prod(ahi - alo)), float(np.prod(bhi - blo)))
    return float(inter / smaller) if smaller > 0 else 0.0


@dataclass
class Detection3D:
    """A detection with its object's points in the world frame."""

    label: str
    score: float
    points: np.ndarray
    embedding: np.ndarray | None = None
    instance_hint: str | None = None
    state: dict[str, bool] = field(default_factory=dict)
    downsampled_at: float | None = None  # the voxel size the points were thinned at already, if any


@dataclass
class MapObject:
    id: str
    points: np.ndarray
    label_votes: dict[str, float]  # label -> summed detection scores
    embedding: np.ndarray | None
    detections: int
    first_seen: float
    last_seen: float
    misses: int = 0
    state: dict[str, bool] = field(default_factory=dict)
    hint_votes: Counter[str] = field(default_factory=Counter)
    _cells: np.ndarray | None = field(default=None, repr=False)
    _box: OrientedBox | None = field(default=None, repr=False)
    _bounds: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _centroid: np.ndarray | None = field(default=None, repr=False)
    _point_keys: np.ndarray | None = field(default=None, repr=False)  # sorted voxel keys of `points`

    @property
    def label(self) -> str:
        return max(self.label_votes, key=lambda k: (self.label_votes[k], k))

    @property
    def centroid(self) -> np.ndarray:
        if self._centroid is None:
            self._centroid = self.points.mean(axis=0)
        return self._centroid

    @property
    def confidence(self) -> float:
        return self.detections / (self.detections + self.misses)

    @property
    def box(self) -> OrientedBox:
        if self._box is None:
            self._box = gravity_aligned_box(self.points)
        return self._box

    def cells(self, size: float) -> np.ndarray:
        if self._cells is None:
            self._cells = np.unique(voxel_keys(self.points, size))
        return self._cells

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        if self._bounds is None:
            self._bounds = (self.points.min(axis=0), self.points.max(axis=0))
        return self._bounds

    def touch(self) -> None:
        """The points changed: drop what was derived from them."""
        self._cells, self._box, self._bounds, self._centroid, self._point_keys = None, None, None, None, None

    def point_keys(self, voxel: float) -> np.ndarray:
        if self._point_keys is None:
            self._point_keys = np.unique(voxel_keys(self.points, voxel))
        return self._point_keys

    def add_points(self, points: np.ndarray, voxel: float, max_points: int) -> bool:
        """Keep the points that fall in voxels the object has no point in yet (one point per voxel:
        a static scene seen again adds nothing, and costs only this look-up). True if any were new."""
        keys = voxel_keys(points, voxel)
        fresh = ~np.isin(keys, self.point_keys(voxel))
        if not fresh.any():
            return False
        new_points = points[fresh]
        _, first = np.unique(keys[fresh], return_index=True)
        merged = np.concatenate([self.points, new_points[first]])
        if merged.shape[0] > max_points:
            # Evenly spaced rows, not random ones: the same input gives the same map.
            merged = merged[np.linspace(0, merged.shape[0] - 1, max_points).astype(int)]
        self.points = merged
        self.touch()
        return True

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "label": self.label, "label_votes": dict(self.label_votes),
            "points": np.round(self.points, 4).tolist(),
            "embedding": None if self.embedding is None else self.embedding.tolist(),
            "detections": self.detections, "misses": self.misses, "first_seen": self.first_seen,
            "last_seen": self.last_seen, "state": self.state, "hint_votes": dict(self.hint_votes),
            "centroid": self.centroid.round(4).tolist(), "box": self.box.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MapObject:
        emb = data.get("embedding")
        return cls(
            id=str(data["id"]), points=np.asarray(data["points"], dtype=float).reshape(-1, 3),
            label_votes={str(k): float(v) for k, v in data["label_votes"].items()},
            embedding=None if emb is None else np.asarray(emb, dtype=np.float32),
            detections=int(data["detections"]), first_seen=float(data["first_seen"]),
            last_seen=float(data["last_seen"]), misses=int(data.get("misses", 0)),
            state={str(k): bool(v) for k, v in (data.get("state") or {}).items()},
            hint_votes=Counter({str(k): int(v) for k, v in (data.get("hint_votes") or {}).items()}),
        )


@dataclass
class FusionStats:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    merged: list[tuple[str, str]] = field(default_factory=list)  # (kept, absorbed)
    removed: list[str] = field(default_factory=list)
    skipped: int = 0  # detections with too few points
    out_of_order: bool = False
    seconds_associate: float = 0.0  # of the integration, the time spent choosing objects for detections


class ObjectMap:
    """The fused objects. Not thread-safe: one owner integrates frames (a node's callback group)."""

    def __init__(self, config: FusionConfig = FusionConfig()):
        self.config = config
        self.objects: dict[str, MapObject] = {}
        # ids fused into another object -> the one they joined (fridge_2 -> fridge_1): a planner or
        # skill that took the old id from an earlier graph still names that object
        self.aliases: dict[str, str] = {}
        self._next_index: Counter[str] = Counter()
        self.latest_stamp = -math.inf
        self.frames = 0

    # -- integration ----------------------------------------------------------------------------
    def integrate(self, detections: Sequence[Detection3D], frame: Frame | None = None, stamp: float | None = None) -> FusionStats:
        """Fold one frame's detections in. With the frame, objects that should have been seen in it
        and were not count a miss. A frame older than one already integrated still adds what it saw
        (a late frame carries real observations) but does not count misses: what it did not see
        may have arrived since."""
        stats = FusionStats()
        t = stamp if stamp is not None else (frame.stamp if frame is not None else float(self.frames))
        stats.out_of_order = t < self.latest_stamp
        self.frames += 1
        matched: set[str] = set()
        grown: set[str] = set()  # objects whose points changed: only they can have come to overlap another
        for det in detections:
            if det.points.shape[0] == 0:
                stats.skipped += 1
                continue
            points = det.points if det.downsampled_at == self.config.voxel else voxel_downsample(det.points, self.config.voxel)
            t0 = time.perf_counter()
            target = self._associate(det, points)
            stats.seconds_associate += time.perf_counter() - t0
            if target is None:
                obj = self._add(det, points, t)
                stats.added.append(obj.id)
                matched.add(obj.id)
                grown.add(obj.id)
            else:
                if self._merge_detection(target, det, points, t):
                    grown.add(target.id)
                stats.updated.append(target.id)
                matched.add(target.id)
        for kept, absorbed in self._merge_duplicates(grown):
            stats.merged.append((kept, absorbed))
            matched.discard(absorbed)
            matched.add(kept)
        if frame is not None and not stats.out_of_order:
            stats.removed = self._count_misses(frame, matched)
        self.latest_stamp = max(self.latest_stamp, t)
        return stats

    def _candidates(self, lo: np.ndarray, hi: np.ndarray) -> list[MapObject]:
        """Objects whose boxes come within a cell of the given box (one vectorised test over all)."""
        if not self.objects:
            return []
        objs = list(self.objects.values())
        bounds = np.array([o.bounds() for o in objs])  # n x 2 x 3
        margin = self.config.overlap_voxel
        near = np.all(bounds[:, 0] - margin <= hi, axis=1) & np.all(lo <= bounds[:, 1] + margin, axis=1)
        return [objs[i] for i in np.flatnonzero(near)]

    def _similarity(self, det: Detection3D, det_cells: np.ndarray, det_bounds: tuple[np.ndarray, np.ndarray],
                    obj: MapObject) -> float:
        shared = np.isin(det_cells, obj.cells(self.config.overlap_voxel), assume_unique=True).sum()
        spatial = shared / max(1, det_cells.size)
        if det.label == obj.label:
            # The same kind of thing seen from another side shares little surface with what was seen
            # before (a fridge's front, then its inside): its box still holds the old one's, or the
            # reverse; or the two faces meet at an edge (two things of one kind touching are taken
            # for one: adjacent counter segments become one counter)
            spatial = max(spatial, box_overlap_of_smaller(det_bounds, obj.bounds(), self.config.overlap_voxel))
            if self._faces_of_one(det_bounds, obj.bounds()):
                spatial = max(spatial, self.config.min_spatial)
        if spatial < self.config.min_spatial:
            return -math.inf
        if det.embedding is not None and obj.embedding is not None:
            visual = float(np.dot(det.embedding, obj.embedding))
            return spatial + self.config.visual_weight * visual
        label_sim = 1.0 if det.label == obj.label else self.config.other_label_similarity
        return spatial + self.config.visual_weight * label_sim

    def _faces_of_one(self, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
        """Two views of one big thing (furniture), one of them a single face, that share only an
        edge; small things are seen whole from one place, and two of them side by side are two."""
        union = np.maximum(a[1], b[1]) - np.minimum(a[0], b[0])
        thin = min(float((a[1] - a[0]).min()), float((b[1] - b[0]).min())) <= self.config.face
        return thin and box_gap(a, b) <= self.config.touching and float(union.max()) >= self.config.big

    def _associate(self, det: Detection3D, points: np.ndarray) -> MapObject | None:
        cells = np.unique(voxel_keys(points, self.config.overlap_voxel))
        bounds = (points.min(axis=0), points.max(axis=0))
        best, best_sim = None, self.config.min_similarity
        for obj in self._candidates(*bounds):
            sim = self._similarity(det, cells, bounds, obj)
            if sim > best_sim:
                best, best_sim = obj, sim
        return best

    def _new_id(self, label: str, hint: str | None) -> str:
        if hint:
            holder = self.objects.get(hint)
            if holder is None:
                return hint
            if holder.hint_votes and holder.hint_votes.most_common(1)[0][0] != hint:
                # The name was taken by a piece of another thing (a second glimpse of the kitchen's
                # sink_1, named sink_2 because sink_1 was taken). The thing the name belongs to has
                # now been seen: it takes its name back, and the piece gets a fresh one (it joins
                # sink_1 when the views overlap). Otherwise the bathroom's sink would be sink_3 and a
                # skill sent to sink_2 would drive to the kitchen.
                self._rename(holder, self._fresh_id(holder.label))
                return hint
        return self._fresh_id(label)

    def _rename(self, obj: MapObject, new_id: str) -> None:
        old_id = obj.id
        del self.objects[old_id]
        obj.id = new_id
        self.objects[new_id] = obj
        self._redirect_aliases(old_id, new_id)

    def _redirect_aliases(self, old_id: str, new_id: str) -> None:
        """Earlier names of the object once called `old_id` now name `new_id`; a live id is nobody's alias."""
        for old, into in self.aliases.items():
            if into == old_id:
                self.aliases[old] = new_id
        self.aliases.pop(new_id, None)

    def _fresh_id(self, label: str) -> str:
        base = "_".join(label.split()) or "object"
        while True:
            self._next_index[base] += 1
            candidate = f"{base}_{self._next_index[base]}"
            if candidate not in self.objects:
                return candidate

    def _add(self, det: Detection3D, points: np.ndarray, t: float) -> MapObject:
        obj = MapObject(
            id=self._new_id(det.label, det.instance_hint), points=self._bounded(points),
            label_votes={det.label: det.score}, embedding=None if det.embedding is None else det.embedding.copy(),
            detections=1, first_seen=t, last_seen=t, state=dict(det.state),
            hint_votes=Counter([det.instance_hint] if det.instance_hint else []),
        )
        self.objects[obj.id] = obj
        # A live id is nobody's alias. The oracle's name for a thing can have been taken by a piece of
        # another one first (a second glimpse of the kitchen sink named sink_2 before the bathroom's
        # sink_2 was seen, then fused into sink_1): from now on sink_2 is the bathroom's sink.
        self.aliases.pop(obj.id, None)
        return obj

    def _bounded(self, points: np.ndarray) -> np.ndarray:
        if points.shape[0] <= self.config.max_points:
            return points
        # Evenly spaced rows, not random ones: the same input gives the same map.
        keep = np.linspace(0, points.shape[0] - 1, self.config.max_points).astype(int)
        return points[keep]

    def _merge_detection(self, obj: MapObject, det: Detection3D, points: np.ndarray, t: float) -> bool:
        grew = obj.add_points(points, self.config.voxel, self.config.max_points)
        obj.label_votes[det.label] = obj.label_votes.get(det.label, 0.0) + det.score
        if det.embedding is not None:
            if obj.embedding is None:
                obj.embedding = det.embedding.copy()
            else:  # running mean over detections, kept unit length
                mean = obj.embedding * obj.detections + det.embedding
                obj.embedding = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
        if det.instance_hint:
            obj.hint_votes[det.instance_hint] += 1
        if t >= obj.last_seen:
            obj.state.update(det.state)  # the newest look at an object says its state
        obj.detections += 1
        obj.misses = 0
        obj.last_seen = max(obj.last_seen, t)
        return grew

    def _merge_duplicates(self, updated: Iterable[str]) -> list[tuple[str, str]]:
        """Objects the frame touched that now overlap another object heavily are one object seen
        in two pieces (the first glimpse of a table's corner, later its whole top)."""
        merged: list[tuple[str, str]] = []
        for oid in sorted(updated):
            obj = self.objects.get(oid)
            if obj is None:
                continue
            lo, hi = obj.bounds()
            for other in self._candidates(lo, hi):
                if other.id == obj.id:
                    continue
                a, b = obj.cells(self.config.overlap_voxel), other.cells(self.config.overlap_voxel)
                overlap = np.intersect1d(a, b, assume_unique=True).size / max(1, min(a.size, b.size))
                if obj.label == other.label:
                    overlap = max(overlap, box_overlap_of_smaller(obj.bounds(), other.bounds(), self.config.overlap_voxel))
                    if self._faces_of_one(obj.bounds(), other.bounds()):
                        overlap = 1.0
                if overlap < self.config.merge_overlap:
                    continue
                if obj.embedding is not None and other.embedding is not None:
                    if float(np.dot(obj.embedding, other.embedding)) < self.config.merge_min_visual:
                        continue
                elif obj.label != other.label:
                    continue
                # The older object keeps its name: the agent has been told of it already
                keep, gone = (obj, other) if (obj.first_seen, obj.id) <= (other.first_seen, other.id) else (other, obj)
                self._absorb(keep, gone)
                merged.append((keep.id, gone.id))
                if gone is obj:
                    break
        return merged

    def _absorb(self, keep: MapObject, gone: MapObject) -> None:
        keep.add_points(gone.points, self.config.voxel, self.config.max_points)
        for label, votes in gone.label_votes.items():
            keep.label_votes[label] = keep.label_votes.get(label, 0.0) + votes
        keep.hint_votes.update(gone.hint_votes)
        if keep.embedding is not None and gone.embedding is not None:
            mean = keep.embedding * keep.detections + gone.embedding * gone.detections
            keep.embedding = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
        keep.detections += gone.detections
        keep.first_seen = min(keep.first_seen, gone.first_seen)
        keep.last_seen = max(keep.last_seen, gone.last_seen)
        del self.objects[gone.id]
        self._redirect_aliases(gone.id, keep.id)  # earlier names of the absorbed object follow it
        self.aliases[gone.id] = keep.id

    def _count_misses(self, frame: Frame, seen: set[str]) -> list[str]:
        """An object that no detection matched is missed when the camera sees through its place: the
        depth at its centroid's pixel lies beyond the centroid (what was there has gone, and the
        table or wall behind it shows). Something in front of it, or the object itself standing
        there undetected, gives a nearer depth and no miss. After `max_misses` misses in a row it goes."""
        removed: list[str] = []
        ids = [oid for oid in self.objects if oid not in seen]
        if not ids:
            return removed
        centroids = np.stack([self.objects[oid].centroid for oid in ids])
        camera_T_world = np.linalg.inv(frame.world_T_camera)
        cam = centroids @ camera_T_world[:3, :3].T + camera_T_world[:3, 3]
        k = frame.intrinsics
        z = cam[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            u = np.where(z > 0, k.fx * cam[:, 0] / z + k.cx, -1.0)
            v = np.where(z > 0, k.fy * cam[:, 1] / z + k.cy, -1.0)
        m = self.config.view_margin
        in_view = (z > 0.1) & (u >= m) & (u < k.width - m) & (v >= m) & (v < k.height - m)
        for i in np.flatnonzero(in_view):
            measured = frame.depth[int(v[i]), int(u[i])]
            if not np.isfinite(measured) or measured <= 0:
                continue  # no depth there: cannot tell whether it is gone
            if measured <= z[i] + self.config.see_through:
                continue  # something (maybe the object itself) stands there
            obj = self.objects[ids[i]]
            obj.misses += 1
            if obj.misses >= self.config.max_misses:
                del self.objects[obj.id]
                removed.append(obj.id)
        return removed

    def resolve(self, object_id: str) -> str:
        """The id of the object `object_id` names now: itself, or the object it was fused into."""
        if object_id in self.objects:
            return object_id
        return self.aliases.get(object_id, object_id)

    # -- changes the robot makes ----------------------------------------------------------------
    def remove(self, object_id: str) -> MapObject | None:
        """The robot picked it up: it is in the gripper, no longer where the map says."""
        return self.objects.pop(object_id, None)
