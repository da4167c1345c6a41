"""Benchmark of the stages after the networks: back-projection, filtering (voxel grid + DBSCAN),
association and the map update, on 640x480 RGB-D frames with 20 object masks each; memory after
thousands of frames of a static scene; and query latency on a 1,000-object map.

    conceptagent perception-bench [--frames 5000] [--masks 20] [--networks]

Frames come from the synthetic camera (a table of 20 things seen from a slowly swaying camera, as
a robot's mast sways); their masks are the true instance masks, as a segmenter would give them.
"""
from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np

from conceptagent_ros.perception.frames import Frame, look_at
from conceptagent_ros.perception.fusion import Detection3D, MapObject, ObjectMap
from conceptagent_ros.perception.geometry import GeometryConfig, backproject, largest_cluster, voxel_downsample
from conceptagent_ros.perception.object_query import query_objects
from conceptagent_ros.scene.house_geometry import Box
from conceptagent_ros.sim.rgbd_camera import CameraConfig, RenderScene

CAMERA_HZ = 30.0


def rss_mib() -> float:
    """Resident memory of this process (Linux /proc; 0 where there is none)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def table_scene(masks: int) -> tuple[RenderScene, list[Box]]:
    """A 2.4 m table with `masks - 1` things on it in a grid, in a 6 x 6 m room."""
    from conceptagent_ros.scene.model import Room

    boxes = [Box("table_1", "table", (0.0, 0.0, 0.375), (2.4, 1.2, 0.75))]
    kinds = ["cup", "bowl", "apple", "book", "mug", "plate", "box", "bottle", "vase", "candle"]
    n = masks - 1
    cols = math.ceil(math.sqrt(n * 2))
    rows = math.ceil(n / cols)
    for i in range(n):
        r, c = divmod(i, cols)
        x = -1.05 + 2.1 * (c + 0.5) / cols
        y = -0.5 + 1.0 * (r + 0.5) / rows
        size = 0.08 + 0.04 * (i % 3)
        kind = kinds[i % len(kinds)]
        boxes.append(Box(f"{kind}_{i}", kind, (x, y, 0.75 + size / 2 + 0.001), (size, size, size)))
    return RenderScene(boxes, Room("room_1", "kitchen", (-3.0, -3.0, 3.0, 3.0))), boxes


def frames_around(scene: RenderScene, count: int, camera: CameraConfig) -> list[Frame]:
    frames = []
    for i in range(count):
        a = 2 * math.pi * i / count
        eye = (-1.5 + 0.05 * math.sin(a), 0.05 * math.cos(a), 2.2)
        frames.append(scene.render(look_at(eye, (0.0, 0.0, 0.75)), camera, stamp=i / CAMERA_HZ))
    return frames


def masks_of(frame: Frame) -> list[tuple[str, np.ndarray]]:
    assert frame.instance_ids is not None
    ids = frame.instance_ids
    return [(frame.instance_names[i].rsplit("_", 1)[0], ids == i) for i in np.unique(ids[ids >= 0])]


def run(frames_total: int, masks: int, out: TextIO = sys.stdout) -> dict[str, float]:
    camera = CameraConfig(width=640, height=480, horizontal_fov_deg=70.0)
    scene, _ = table_scene(masks)
    ring = frames_around(scene, 60, camera)
    prepared = [(f, masks_of(f)) for f in ring]
    mean_masks = statistics.mean(len(m) for _, m in prepared)
    geometry = GeometryConfig()
    object_map = ObjectMap()
    times: dict[str, list[float]] = {k: [] for k in ("backproject", "filter", "associate", "update")}
    rss_start = 0.0
    print(f"{frames_total} frames of 640x480, {mean_masks:.0f} masks each (static scene, swaying camera)", file=out)
    step = max(1, frames_total // 10)
    for n in range(frames_total):
        frame, frame_masks = prepared[n % len(prepared)]
        frame.stamp = n / CAMERA_HZ
        t0 = time.perf_counter()
        clouds = [(label, backproject(frame, mask, geometry)) for label, mask in frame_masks]
        t1 = time.perf_counter()
        dets = []
        for label, pts in clouds:
            pts = largest_cluster(voxel_downsample(pts, geometry.voxel), geometry.dbscan_eps, geometry.dbscan_min_points)
            dets.append(Detection3D(label, 0.9, pts, downsampled_at=geometry.voxel))
        t2 = time.perf_counter()
        stats = object_map.integrate(dets, frame)
        t3 = time.perf_counter()
        times["backproject"].append(t1 - t0)
        times["filter"].append(t2 - t1)
        times["associate"].append(stats.seconds_associate)
        times["update"].append(t3 - t2 - stats.seconds_associate)
        if n == min(100, frames_total - 1):
            rss_start = rss_mib()
        if (n + 1) % step == 0:
            print(f"  frame {n + 1:>5}/{frames_total}: {len(object_map.objects)} objects, "
                  f"{sum(o.points.shape[0] for o in object_map.objects.values())} points, RSS {rss_mib():.0f} MiB",
                  file=out, flush=True)
    rss_end = rss_mib()
    medians = {k: statistics.median(v) for k, v in times.items()}
    total = sum(medians.values())
    fps = 1.0 / total
    print(f"\nper frame (median), {mean_masks:.0f} masks:", file=out)
    for k, v in medians.items():
        print(f"  {k:<12} {1000 * v:7.2f} ms", file=out)
    print(f"  {'total':<12} {1000 * total:7.2f} ms   -> {fps:6.1f} frames/s = {fps / CAMERA_HZ:.2f}x a 30 Hz camera", file=out)
    print(f"memory: RSS {rss_start:.0f} MiB after 100 frames, {rss_end:.0f} MiB after {frames_total} "
          f"({rss_end - rss_start:+.1f} MiB); {len(object_map.objects)} objects", file=out)
    query_ms = query_latency(out)
    bar = "met" if fps >= CAMERA_HZ else "NOT met"
    print(f"bar: fusion >= 30 Hz on this CPU: {bar} ({fps:.1f} Hz)", file=out)
    return {"fps": fps, "rss_start": rss_start, "rss_end": rss_end, "query_ms": query_ms, **medians}


def query_latency(out: TextIO = sys.stdout, objects: int = 1000, dim: int = 512) -> float:
    rng = np.random.default_rng(0)
    vocab = ["cup", "bowl", "chair", "table", "lamp", "book", "plant", "bottle", "shoe", "laptop"]
    m = ObjectMap()
    for i in range(objects):
        emb = rng.normal(size=dim).astype(np.float32)
        emb /= np.linalg.norm(emb)
        pts = rng.normal(rng.uniform(-20, 20, 3), 0.05, (200, 3))
        label = vocab[i % len(vocab)]
        m.objects[f"{label}_{i}"] = MapObject(f"{label}_{i}", pts, {label: 1.0}, emb, 1, 0.0, 0.0)
    text = rng.normal(size=dim).astype(np.float32)

    class FixedText:  # the text embedding is CLIP's cost, not the map's: a fixed vector here
        def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
            return text[None, :]

        def embed_images(self, crops: Sequence[np.ndarray]) -> np.ndarray:
            raise NotImplementedError

    for o in m.objects.values():  # boxes are derived lazily; a live map has them already
        _ = o.box
    runs = []
    for _ in range(50):
        t = time.perf_counter()
        query_objects(m.objects.values(), "a red cup", FixedText(), top_k=5)
        runs.append(time.perf_counter() - t)
    lexical = []
    for _ in range(50):
        t = time.perf_counter()
        query_objects([o for o in m.objects.values()], "a red cup", None, top_k=5)
        lexical.append(time.perf_counter() - t)
    q, lx = 1000 * statistics.median(runs), 1000 * statistics.median(lexical)
    print(f"query on a {objects}-object map: {q:.2f} ms with {dim}-d embeddings, {lx:.2f} ms by words", file=out)
    return q


def network_times(config: str | None = None, frames: int = 10, out: TextIO = sys.stdout) -> dict[str, float]:
    """Each configured network's time per 640x480 frame (20 boxes for the segmenter and embedder),
    on the configured device: run where the models and a GPU are."""
    from conceptagent_ros.perception.config import build_detector, build_embedder, build_segmenter, load_perception_spec
    from conceptagent_ros.perception.detections import Detection, masked_crop

    spec = load_perception_spec(config)
    scene, _ = table_scene(20)
    frame = frames_around(scene, 1, CameraConfig(width=640, height=480))[0]
    boxes = [Detection(label, 0.9, _box_of(mask)) for label, mask in masks_of(frame)]
    timings: dict[str, float] = {}

    def timed(name: str, fn: Any) -> None:
        fn()  # warm-up (CUDA kernels, caches)
        t = time.perf_counter()
        for _ in range(frames):
            fn()
        timings[name] = (time.perf_counter() - t) / frames

    detector = build_detector(spec)
    timed(f"detect ({spec.detector.kind})", lambda: detector.detect(frame, spec.vocabulary))
    segmenter = build_segmenter(spec)
    if segmenter is not None:
        timed(f"segment ({spec.segmenter.kind}, {len(boxes)} boxes)", lambda: segmenter.segment(frame.rgb, list(boxes)))
    embedder = build_embedder(spec)
    if embedder is not None:
        crops = [masked_crop(frame.rgb, None, d.box) for d in boxes]
        timed(f"embed ({spec.embedder.kind}, {len(crops)} crops)", lambda: embedder.embed_images(crops))
    print(f"\nnetworks on {spec.device}, per 640x480 frame:", file=out)
    for name, s in timings.items():
        print(f"  {name:<36} {1000 * s:8.1f} ms   ({1 / s:6.1f} Hz)", file=out)
    return timings


def _box_of(mask: np.ndarray) -> tuple[float, float, float, float]:
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    return float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1)
