"""Every detector, the segmenter and the embedder, built as tiny models, saved, and loaded through
the config's real paths (from_pretrained with local files only; segment-anything's registry and
torch.load) with HF_HUB_OFFLINE=1; then the whole frame pipeline on them, including bad frames."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tiny_vision_models as tiny

from conceptagent_ros.perception.config import (
    PerceptionSpec,
    build_detector,
    build_embedder,
    build_segmenter,
)
from conceptagent_ros.perception.frames import Frame, Intrinsics, look_at
from conceptagent_ros.perception.fusion import ObjectMap
from conceptagent_ros.perception.model_files import MissingModelError
from conceptagent_ros.perception.pipeline import FramePipeline

VOCAB = ["cup", "red apple", "table"]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("tiny_models")
    tiny.build_clip(base / "clip")
    tiny.build_owl(base / "owlv2", version=2)
    tiny.build_owl(base / "owlvit", version=1)
    tiny.build_grounding_dino(base / "grounding_dino")
    tiny.build_sam_checkpoint(base / "sam.pth")
    return base


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tiny.register_tiny_sam()


def spec(models: Path, kind: str, **detector: object) -> PerceptionSpec:
    model = str(models / kind) if kind in ("owlv2", "owlvit", "grounding_dino") else "unused"
    return PerceptionSpec.model_validate({
        "detector": {"kind": kind, "model": model, "threshold": 0.0, **detector},
        "segmenter": {"kind": "sam", "model_type": tiny.TINY_SAM, "checkpoint": str(models / "sam.pth"),
                      "points_per_side": 4, "pred_iou_thresh": 0.0, "stability_score_thresh": 0.0},
        "embedder": {"kind": "clip", "model": str(models / "clip")},
        "vocabulary": VOCAB,
    })


def frame(depth: float | None = 2.0, stamp: float = 0.0, seed: int = 0) -> Frame:
    rng = np.random.default_rng(seed)
    d = np.full((48, 64), np.nan if depth is None else depth, np.float32)
    return Frame(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8), d, Intrinsics.from_fov(64, 48, 60),
                 look_at((0, 0, 1), (1, 0, 1)), stamp=stamp)


@pytest.mark.parametrize("kind", ["owlv2", "owlvit", "grounding_dino"])
def test_detectors_load_from_their_saved_files_and_answer_in_the_vocabulary(models: Path, kind: str) -> None:
    detector = build_detector(spec(models, kind))
    assert_in_vocabulary_and_image(detector.detect(frame(), VOCAB), VOCAB, empty_boxes=False)
    assert detector.detect(frame(), []) == []


def assert_in_vocabulary_and_image(found: list, vocabulary: list[str], empty_boxes: bool) -> None:
    """Detections of a 64x48 frame: some, each labelled from the vocabulary, boxed inside the image,
    scored as a probability (a random network may propose boxes of no width where `empty_boxes`)."""
    assert found, "threshold 0 keeps every proposal"
    for det in found:
        assert det.label in vocabulary
        x0, y0, x1, y1 = det.box
        if empty_boxes:
            assert 0 <= x0 <= x1 <= 64 and 0 <= y0 <= y1 <= 48
        else:
            assert 0 <= x0 < x1 <= 64 and 0 <= y0 < y1 <= 48
        assert 0.0 <= det.score <= 1.0


def test_clip_embeds_crops_and_texts_in_one_space(models: Path) -> None:
    embedder = build_embedder(spec(models, "owlv2"))
    assert embedder is not None
    img = frame().rgb
    a = embedder.embed_images([img, img[:20, :30], img])
    assert a.shape == (3, 16)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(a[0], a[2], rtol=1e-5)  # same crop, same vector
    t = embedder.embed_texts(["a cup", "a red apple"])
    assert t.shape == (2, 16) and not np.allclose(t[0], t[1])
    assert embedder.embed_images([]).shape == (0, 16)


def test_sam_masks_follow_the_boxes_they_are_given(models: Path) -> None:
    segmenter = build_segmenter(spec(models, "owlv2"))
    assert segmenter is not None
    from conceptagent_ros.perception.detections import Detection

    dets = segmenter.segment(frame().rgb, [Detection("cup", 0.9, (5, 5, 30, 20)), Detection("table", 0.8, (0, 20, 64, 48))])
    for det in dets:
        assert det.mask is None or (det.mask.shape == (48, 64) and det.mask.dtype == bool)


def test_automatic_masks_are_named_from_the_vocabulary_by_clip(models: Path) -> None:
    s = spec(models, "sam_automatic")
    pipeline = FramePipeline(build_detector(s), ObjectMap(), build_segmenter(s), build_embedder(s), vocabulary=VOCAB)
    report = pipeline.process(frame())
    assert report.detections > 0
    assert all(o.label in VOCAB for o in pipeline.map.objects.values())


def test_the_pipeline_survives_bad_frames(models: Path) -> None:
    s = spec(models, "owlvit")  # the tiny OWLv2 proposes boxes of no height; the tiny OWL-ViT real ones
    pipeline = FramePipeline(build_detector(s), ObjectMap(), build_segmenter(s), build_embedder(s), vocabulary=VOCAB)
    first = pipeline.process(frame(stamp=1.0))
    assert first.detections > 0 and len(pipeline.map.objects) > 0
    assert all(o.embedding is not None for o in pipeline.map.objects.values())
    objects = len(pipeline.map.objects)
    assert pipeline.process(frame(depth=None, stamp=2.0)).fusion.skipped > 0  # all-NaN depth: nothing to place
    late = pipeline.process(frame(stamp=0.5, seed=1))  # older than what came before
    assert late.fusion.out_of_order
    pipeline.vocabulary = []
    assert pipeline.process(frame(stamp=3.0)).detections == 0  # nothing asked for, nothing found
    assert len(pipeline.map.objects) >= objects


def test_missing_weights_say_what_to_run(tmp_path: Path, models: Path) -> None:
    with pytest.raises(MissingModelError, match="conceptagent models fetch"):
        build_detector(spec(tmp_path, "owlv2").model_copy(update={"detector": spec(tmp_path, "owlv2").detector.model_copy(
            update={"model": "google/owlv2-not-downloaded"})}))
    broken = spec(models, "owlv2")
    broken.segmenter.checkpoint = str(tmp_path / "nothing.pth")
    with pytest.raises(MissingModelError, match="models fetch"):
        build_segmenter(broken)
    broken.segmenter.checkpoint = str(models / "sam.pth")
    broken.segmenter.model_type = "vit_h"
    with pytest.raises(MissingModelError, match="does not fit"):
        build_segmenter(broken)


@pytest.fixture(scope="module")
def yolo_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny YOLO-World checkpoint and a tiny CLIP whose text embeddings have the 512 dimensions
    its head reads (published YOLO-World pairs with CLIP ViT-B/32)."""
    pytest.importorskip("ultralytics")
    base = tmp_path_factory.mktemp("tiny_yolo_world")
    tiny.build_yolo_world(base / "yolo_world.pt")
    tiny.build_clip(base / "clip512", projection_dim=512)
    return base


def yolo_spec(models: Path, yolo: Path, **detector: object) -> PerceptionSpec:
    return spec(models, "yolo_world", **{"weights": str(yolo / "yolo_world.pt"), "text_model": str(yolo / "clip512"),
                                         **detector})


def test_yolo_world_loads_its_checkpoint_and_names_classes_by_clip_text(models: Path, yolo_world: Path) -> None:
    import torch

    from conceptagent_ros.perception.embedders import ClipEmbedder

    detector = build_detector(yolo_spec(models, yolo_world))
    assert_in_vocabulary_and_image(detector.detect(frame(), VOCAB), VOCAB, empty_boxes=True)
    # the classes the head matches regions against are the vocabulary's CLIP text embeddings
    world = detector.model.model  # type: ignore[attr-defined]
    texts = ClipEmbedder(str(yolo_world / "clip512")).embed_texts(VOCAB)
    assert world.txt_feats.shape == (1, len(VOCAB), 512)
    assert torch.allclose(world.txt_feats[0], torch.from_numpy(texts), atol=1e-5)
    # a new vocabulary becomes the new classes
    other = ["sofa", "book"]
    assert {d.label for d in detector.detect(frame(seed=1), other)} <= set(other)
    assert world.txt_feats.shape == (1, 2, 512) and world.model[-1].nc == 2
    assert detector.detect(frame(), []) == []


def test_yolo_world_refuses_a_text_model_of_the_wrong_width_and_missing_weights(models: Path, yolo_world: Path,
                                                                                tmp_path: Path) -> None:
    with pytest.raises(MissingModelError, match="512-d text embeddings"):
        build_detector(spec(models, "yolo_world", weights=str(yolo_world / "yolo_world.pt"),
                            text_model=str(models / "clip")))  # the 16-d tiny CLIP
    with pytest.raises(MissingModelError, match="models fetch"):
        build_detector(yolo_spec(models, yolo_world, weights=str(tmp_path / "absent.pt")))


def test_models_fetch_downloads_the_yolo_world_weights_and_knows_its_text_model(models: Path, yolo_world: Path,
                                                                               tmp_path: Path, capsys) -> None:
    """`conceptagent models fetch` for a YOLO-World config: the weights from their URL (a local HTTP
    server here) into place, and the CLIP that names its classes among the models it fetches (a
    local folder: nothing to fetch). A second run finds everything in place."""
    import functools
    import http.server
    import json
    import threading

    import yaml

    from conceptagent_ros.cli import main

    served = tmp_path / "served"
    served.mkdir()
    (served / "yolo.pt").write_bytes((yolo_world / "yolo_world.pt").read_bytes())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    target = tmp_path / "cache" / "yolo.pt"
    config = tmp_path / "perception.yaml"
    config.write_text(yaml.safe_dump({
        "detector": {"kind": "yolo_world", "weights": str(target), "text_model": str(yolo_world / "clip512"),
                     "weights_url": f"http://127.0.0.1:{server.server_address[1]}/yolo.pt"},
        "segmenter": {"kind": "box"}, "embedder": {"kind": "clip", "model": str(models / "clip")}}))
    try:
        assert main(["models", "fetch", "--only", "perception", "--config", str(config)]) == 0
        out = capsys.readouterr().out
        assert target.read_bytes() == (served / "yolo.pt").read_bytes()
        fetched = json.loads(out.strip().splitlines()[-1])["fetched"]
        assert str(yolo_world / "clip512") in fetched and str(target) in fetched
        assert main(["models", "fetch", "--only", "perception", "--config", str(config)]) == 0
        assert "already here" in capsys.readouterr().out
    finally:
        server.shutdown()
    detector = build_detector(PerceptionSpec.model_validate(yaml.safe_load(config.read_text())))
    detector.detect(frame(), ["cup"])  # the fetched file loads and takes a vocabulary
    assert detector.model.model.names == {0: "cup"}  # type: ignore[attr-defined]
