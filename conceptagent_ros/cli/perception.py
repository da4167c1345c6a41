"""`conceptagent perceive`, `conceptagent perception-bench`, and the perception part of `conceptagent
models fetch` (cli/models.py)."""
from __future__ import annotations

import argparse
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from conceptagent_ros.errors import ConceptAgentError, ConfigError


def _missing_perception(e: ImportError) -> ConceptAgentError:
    return ConceptAgentError(f"perception needs packages that are not installed ({e.name or e}): "
                             "pip install -c constraints.txt -e '.[perception]'")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("perceive", help="build a 3D object map: a camera tour of an embedded scene, or a rosbag2 recording",
                       description="Build an object map from RGB-D: --scene drives the embedded robot's synthetic camera "
                                   "through a scene (oracle detector) and scores the map against the truth; --bag replays a "
                                   "rosbag2 recording (MCAP or sqlite3) through the configured detector, segmenter and "
                                   "embedder. Writes graph.json, objects.ply and objects.png.")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--scene", help="built-in scene name (or 'all') for the embedded camera tour")
    source.add_argument("--bag", help="rosbag2 folder, .mcap or .db3 file")
    p.add_argument("--rgb", help="colour image topic (sensor_msgs/Image)")
    p.add_argument("--depth", help="depth image topic (16UC1 mm or 32FC1 m), registered to the colour camera")
    p.add_argument("--camera-info", help="CameraInfo topic of the depth image")
    p.add_argument("--pose", help="camera pose topic (PoseStamped, Odometry, TransformStamped...); none: a still camera")
    p.add_argument("--pose-frame", choices=("optical", "link"), default="optical",
                   help="the pose is of the optical frame (z forward) or of a REP 103 link (x forward)")
    p.add_argument("--config", help="perception YAML (default config/perception.yaml)")
    p.add_argument("--vocabulary", help="comma-separated things to look for (default: the config's list)")
    p.add_argument("--every", type=int, default=1, help="use every n-th frame")
    p.add_argument("--max-frames", type=int, help="stop after this many frames")
    p.add_argument("--noise", type=float, default=0.0, help="--scene: depth noise (m at 1 m, growing with depth^2)")
    p.add_argument("--out", default="perception_out", help="folder for graph.json, objects.ply, objects.png")
    p.set_defaults(func=cmd_perceive)

    b = sub.add_parser("perception-bench", help="fusion cost per frame (640x480, 20 masks), memory, query latency")
    b.add_argument("--frames", type=int, default=5000)
    b.add_argument("--masks", type=int, default=20)
    b.add_argument("--networks", action="store_true",
                   help="also time each configured network per frame (needs its weights; use on a GPU machine)")
    b.add_argument("--config", help="perception YAML for --networks")
    b.set_defaults(func=cmd_perception_bench)


def _outputs(object_map: Any, out: Path, extra: dict[str, Any], title: str) -> None:
    from conceptagent_ros.perception.map_io import save_map, save_ply
    from conceptagent_ros.perception.map_picture import draw_map, summary_lines

    out.mkdir(parents=True, exist_ok=True)
    save_map(object_map, out / "graph.json", extra)
    save_ply(object_map, out / "objects.ply")
    draw_map(object_map, out / "objects.png", title)
    print("\n".join(summary_lines(object_map)))
    print(f"Wrote {out / 'graph.json'}, {out / 'objects.ply'} and {out / 'objects.png'}")


def cmd_perceive(args: argparse.Namespace) -> int:
    if args.every < 1 or (args.max_frames is not None and args.max_frames < 1):
        raise ConfigError("--every and --max-frames must be at least 1")
    try:
        if args.scene:
            return _perceive_scene(args)
        return _perceive_bag(args)
    except ImportError as e:
        raise _missing_perception(e) from e


def _perceive_scene(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.perception_eval import survey_scene
    from conceptagent_ros.scene.loader import list_scenes, load_scene
    from conceptagent_ros.sim.rgbd_camera import CameraConfig

    scenes = list_scenes("household") if args.scene == "all" else [load_scene(args.scene).name]
    camera = CameraConfig(depth_noise=args.noise)
    print(f"{'scene':<16} {'frames':>6} {'seen':>5} {'recall':>7} {'precision':>9} {'duplicates':>10} {'centroid err':>12} "
          f"{'ms/frame':>9}")
    worst_ok = True
    for name in scenes:
        score, robot = survey_scene(name, camera=camera)
        print(f"{name:<16} {score.frames:>6} {score.seen:>5} {score.recall:>7.1%} {score.precision:>9.1%} "
              f"{score.duplicate_rate:>10.1%} {score.centroid_error_m:>10.3f} m {1000 * score.seconds_per_frame:>9.1f}",
              flush=True)
        for label, items in (("missed", score.missed), ("spurious", score.spurious), ("duplicated", score.duplicated)):
            if items:
                print(f"    {label}: {', '.join(items)}")
        worst_ok &= score.recall >= 0.95 and score.duplicate_rate <= 0.05
        out = Path(args.out) / name if len(scenes) > 1 else Path(args.out)
        _outputs(robot.map, out, {"scene": name, "score": {k: v for k, v in score.__dict__.items()}},
                 f"{name}: {len(robot.map.objects)} objects from {score.frames} frames "
                 f"(recall {score.recall:.0%}, duplicates {score.duplicate_rate:.0%})")
    return 0 if worst_ok else 1


def _progress() -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm comes with transformers
        return lambda done, total: print(f"  frame {done}/{total}", file=sys.stderr) if done % 50 == 0 else None
    bar: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, unit="frame", file=sys.stderr, dynamic_ncols=True)
        bar["bar"].update(done - bar["bar"].n)

    update.close = lambda: bar["bar"].close() if "bar" in bar else None  # type: ignore[attr-defined]
    return update


def _perceive_bag(args: argparse.Namespace) -> int:
    from conceptagent_ros.perception.bag_replay import BagTopics, replay_bag
    from conceptagent_ros.perception.config import build_detector, build_embedder, build_segmenter, load_perception_spec
    from conceptagent_ros.perception.fusion import ObjectMap
    from conceptagent_ros.perception.pipeline import FramePipeline

    missing = [flag for flag, value in (("--rgb", args.rgb), ("--depth", args.depth), ("--camera-info", args.camera_info))
               if not value]
    if missing:
        raise ConfigError(f"--bag needs {', '.join(missing)}")
    spec = load_perception_spec(args.config)
    vocabulary = [v.strip() for v in args.vocabulary.split(",") if v.strip()] if args.vocabulary else spec.vocabulary
    if not vocabulary and spec.detector.kind not in ("sam_automatic", "plugin"):
        raise ConfigError("nothing to look for: give --vocabulary or a vocabulary in the config")
    print(f"Loading {spec.detector.kind} detector, {spec.segmenter.kind} segmenter, {spec.embedder.kind} embedder ...",
          flush=True)
    pipeline = FramePipeline(build_detector(spec), ObjectMap(spec.fusion_config()), build_segmenter(spec),
                             build_embedder(spec), spec.geometry_config(), vocabulary)
    topics = BagTopics(args.rgb, args.depth, args.camera_info, args.pose, args.pose_frame)
    progress = _progress()
    start = time.perf_counter()
    try:
        report = replay_bag(args.bag, topics, pipeline, every=args.every, max_frames=args.max_frames, progress=progress)
    finally:
        getattr(progress, "close", lambda: None)()
    wall = time.perf_counter() - start
    print(f"{report.frames} frames in {wall:.1f} s ({report.frames / max(wall, 1e-9):.1f} frames/s); "
          f"{len(pipeline.map.objects)} objects")
    if report.frames:
        stages = ", ".join(f"{k} {1000 * v / report.frames:.1f} ms" for k, v in report.seconds.items())
        print(f"per frame: {stages}")
    if report.skipped_no_pose:
        print(f"skipped {report.skipped_no_pose} frames with no pose within 0.2 s")
    for bad in report.skipped_bad[:5]:
        print(f"skipped a frame: {bad}")
    _outputs(pipeline.map, Path(args.out), {"bag": str(args.bag), "frames": report.frames},
             f"{Path(args.bag).name}: {len(pipeline.map.objects)} objects from {report.frames} frames")
    return 0 if report.frames else 1


def cmd_perception_bench(args: argparse.Namespace) -> int:
    if args.frames < 1 or args.masks < 2:
        raise ConfigError("--frames must be >= 1 and --masks >= 2")
    try:
        from conceptagent_ros.evaluation import fusion_bench
    except ImportError as e:
        raise _missing_perception(e) from e
    fusion_bench.run(args.frames, args.masks)
    if args.networks:
        fusion_bench.network_times(args.config)
    return 0


def _download(url: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(target.suffix + ".part")
    print(f"  {url} -> {target}", flush=True)
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as f:  # noqa: S310 - configured URL
            total = int(response.headers.get("Content-Length") or 0)
            done = 0
            while chunk := response.read(1 << 20):
                f.write(chunk)
                done += len(chunk)
                if total:
                    print(f"\r    {done / 2**20:.0f} / {total / 2**20:.0f} MiB", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        partial.replace(target)
    except OSError as e:
        partial.unlink(missing_ok=True)
        raise ConceptAgentError(f"could not download {url}: {e}") from e


def fetch_perception_models(config: str | None) -> list[str]:
    """The perception configuration's weights, from their hubs and URLs; what was fetched."""
    from conceptagent_ros.perception.config import load_perception_spec
    from conceptagent_ros.perception.model_files import expand

    spec = load_perception_spec(config)
    print("Fetching the perception models of the configuration:")
    hub = []
    if spec.detector.kind in ("owlv2", "owlvit", "grounding_dino"):
        hub.append(spec.detector.model)
    if spec.detector.kind == "yolo_world":
        hub.append(spec.detector.text_model)
    if spec.embedder.kind == "clip":
        hub.append(spec.embedder.model)
    for repo in dict.fromkeys(hub):  # once each, in order
        if expand(repo).exists():
            print(f"  {repo}: a local folder, nothing to fetch")
            continue
        try:
            from huggingface_hub import snapshot_download
        except ImportError as e:
            raise _missing_perception(e) from e
        print(f"  {repo} (Hugging Face)", flush=True)
        try:
            snapshot_download(repo)
        except Exception as e:  # hub errors are many; each means the download failed
            raise ConceptAgentError(f"could not download {repo}: {str(e).splitlines()[0]}") from e
    files = []
    if spec.segmenter.kind == "sam" or spec.detector.kind == "sam_automatic":
        files.append((spec.segmenter.checkpoint_url, expand(spec.segmenter.checkpoint)))
    if spec.detector.kind == "yolo_world":
        files.append((spec.detector.weights_url, expand(spec.detector.weights)))
    for url, target in files:
        if target.is_file():
            print(f"  {target}: already here")
        elif not url:
            raise ConfigError(f"{target} is missing and the config gives no URL to fetch it from")
        else:
            _download(url, target)
    return hub + [str(t) for _, t in files]
