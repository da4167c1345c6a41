"""The perception config (config/perception.yaml): which detector, segmenter and embedder, where
their weights are, and the geometry and fusion settings; checked by pydantic, one-line errors."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.paths import config_dir
from conceptagent_ros.perception.detections import Detector, Embedder, Segmenter
from conceptagent_ros.perception.fusion import FusionConfig
from conceptagent_ros.perception.geometry import GeometryConfig

Probability = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DetectorSpec(_Strict):
    kind: Literal["owlv2", "owlvit", "grounding_dino", "yolo_world", "sam_automatic", "oracle", "sim_paint",
                  "plugin"] = "owlv2"
    model: str = "google/owlv2-base-patch16-ensemble"
    weights: str = "~/.cache/conceptagent/models/yolov8s-worldv2.pt"
    weights_url: str = ""
    # yolo_world: the CLIP whose text embeddings name the classes (the one YOLO-World was trained with)
    text_model: str = "openai/clip-vit-base-patch32"
    threshold: Probability = 0.15
    # kind: oracle -- the fewest pixels a thing's mask has to be detected (a 320 x 240 camera shows a
    # bunch of keys across a room in about 15)
    min_pixels: Annotated[int, Field(ge=1)] = 30
    # kind: plugin -- your own detector: "package.module:ClassName", built with plugin_args; it has
    # detect(frame, vocabulary) -> list[Detection] (perception/detections.py)
    plugin: str = ""
    plugin_args: dict[str, Any] = Field(default_factory=dict)


class SegmenterSpec(_Strict):
    kind: Literal["sam", "box"] = "sam"
    model_type: str = "vit_b"
    checkpoint: str = "~/.cache/conceptagent/models/sam_vit_b_01ec64.pth"
    checkpoint_url: str = ""
    points_per_side: Annotated[int, Field(ge=1, le=128)] = 16
    pred_iou_thresh: Probability = 0.88  # automatic masks kept above this predicted quality...
    stability_score_thresh: Probability = 0.95  # ...and this stability (segment-anything's defaults)


class EmbedderSpec(_Strict):
    kind: Literal["clip", "none"] = "clip"
    model: str = "openai/clip-vit-base-patch32"


class PerceptionSpec(_Strict):
    detector: DetectorSpec = DetectorSpec()
    segmenter: SegmenterSpec = SegmenterSpec()
    embedder: EmbedderSpec = EmbedderSpec()
    device: str = "cpu"
    vocabulary: list[str] = Field(default_factory=list)
    geometry: dict[str, Any] = Field(default_factory=dict)
    fusion: dict[str, Any] = Field(default_factory=dict)

    def geometry_config(self) -> GeometryConfig:
        return _dataclass_from(GeometryConfig, self.geometry, "geometry")

    def fusion_config(self) -> FusionConfig:
        return _dataclass_from(FusionConfig, self.fusion, "fusion")


def _dataclass_from(cls: Any, values: dict[str, Any], section: str) -> Any:
    known = set(cls.__dataclass_fields__)
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"perception config: {section} has no setting {', '.join(unknown)} "
                          f"(known: {', '.join(sorted(known))})")
    return cls(**values)


def load_perception_spec(path: str | Path | None = None) -> PerceptionSpec:
    import yaml

    source = Path(path) if path else config_dir() / "perception.yaml"
    try:
        raw = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"{source}: cannot be read as YAML: {str(e).splitlines()[0]}") from None
    try:
        return PerceptionSpec.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{source}: {where}: {err['msg']}") from None


def build_detector(spec: PerceptionSpec) -> Detector:
    d = spec.detector
    if d.kind in ("owlv2", "owlvit"):
        from conceptagent_ros.perception.detectors.transformers_detectors import OwlDetector

        return OwlDetector(d.model, threshold=d.threshold, device=spec.device)
    if d.kind == "grounding_dino":
        from conceptagent_ros.perception.detectors.transformers_detectors import GroundingDinoDetector

        return GroundingDinoDetector(d.model, threshold=d.threshold, device=spec.device)
    if d.kind == "yolo_world":
        from conceptagent_ros.perception.detectors.yolo_world import YoloWorldDetector

        return YoloWorldDetector(d.weights, threshold=d.threshold, device=spec.device, text_model=d.text_model)
    if d.kind == "sam_automatic":
        from conceptagent_ros.perception.segmenters import AutomaticMasks

        s = spec.segmenter
        return AutomaticMasks(s.model_type, s.checkpoint, spec.device, points_per_side=s.points_per_side,
                              pred_iou_thresh=s.pred_iou_thresh, stability_score_thresh=s.stability_score_thresh)
    if d.kind == "plugin":
        return _plugin(d.plugin, d.plugin_args)
    if d.kind == "sim_paint":
        from conceptagent_ros.perception.detectors.sim_paint import SimPaintDetector

        return SimPaintDetector()
    raise ConfigError("the oracle detector reads a simulator's instance ids: it works on the embedded camera "
                      "(`run --perception camera`, `perceive --scene`), not on recorded images")


def _plugin(target: str, args: dict[str, Any]) -> Detector:
    import importlib

    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name:
        raise ConfigError(f"detector plugin must be 'package.module:ClassName', not {target!r}")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"detector plugin {target!r} cannot be imported: {e}") from e
    detector = cls(**args)
    if not callable(getattr(detector, "detect", None)):
        raise ConfigError(f"detector plugin {target!r} has no detect(frame, vocabulary) method")
    return detector  # type: ignore[no-any-return]


def build_segmenter(spec: PerceptionSpec) -> Segmenter | None:
    if spec.segmenter.kind == "box" or spec.detector.kind in ("sam_automatic", "oracle", "sim_paint"):
        return None  # automatic masks, the oracle and the paint detector come with their masks
    from conceptagent_ros.perception.segmenters import SamSegmenter

    return SamSegmenter(spec.segmenter.model_type, spec.segmenter.checkpoint, spec.device)


def build_embedder(spec: PerceptionSpec) -> Embedder | None:
    if spec.embedder.kind == "none":
        return None
    from conceptagent_ros.perception.embedders import ClipEmbedder

    return ClipEmbedder(spec.embedder.model, device=spec.device)
