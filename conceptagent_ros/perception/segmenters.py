"""Masks from segment-anything: box prompts from the detector's boxes, or ConceptAgent's automatic
mode (a point grid over the whole image; each mask becomes a detection, labelled by CLIP later).

The checkpoint is loaded through segment-anything's own registry (`sam_model_registry[type]`),
so the official vit_h / vit_l / vit_b files and any type registered there (MobileSAM's vit_t) work.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from conceptagent_ros.perception.detections import Detection
from conceptagent_ros.perception.model_files import MissingModelError, expand

UNLABELLED = "object"  # named by CLIP in the pipeline (perception/pipeline.py)


def load_sam(model_type: str, checkpoint: str, device: str = "cpu") -> Any:
    from segment_anything import sam_model_registry

    if model_type not in sam_model_registry:
        raise MissingModelError(f"SAM model type {model_type!r} is unknown; segment-anything has "
                                f"{', '.join(sorted(sam_model_registry))}")
    path = expand(checkpoint)
    if not path.is_file():
        raise MissingModelError(f"SAM checkpoint {path} is not on this machine: run `conceptagent models fetch`")
    try:
        return sam_model_registry[model_type](checkpoint=str(path)).to(device).eval()
    except (RuntimeError, KeyError) as e:  # a checkpoint of another type: state-dict keys or sizes differ
        raise MissingModelError(f"SAM checkpoint {path} does not fit model type {model_type!r}: "
                                f"{str(e).splitlines()[0]}") from e


class SamSegmenter:
    """Box-prompted masks: one SAM image embedding per frame, one decoder pass per detection."""

    def __init__(self, model_type: str, checkpoint: str, device: str = "cpu", sam: Any = None):
        from segment_anything import SamPredictor

        self.sam = sam if sam is not None else load_sam(model_type, checkpoint, device)
        self.predictor = SamPredictor(self.sam)

    def segment(self, rgb: np.ndarray, detections: list[Detection]) -> list[Detection]:
        if not detections:
            return detections
        self.predictor.set_image(np.ascontiguousarray(rgb))
        for det in detections:
            masks, scores, _ = self.predictor.predict(box=np.asarray(det.box, dtype=float), multimask_output=False)
            mask = masks[0].astype(bool)
            det.mask = mask if mask.any() else None  # an empty mask: the pipeline falls back on the box
        return detections


class AutomaticMasks:
    """ConceptAgent's automatic-mask mode: SAM proposes every mask in the image (a point grid),
    without a detector. Each mask becomes a detection labelled "object"; with an embedder behind
    it, labels come from the vocabulary by CLIP similarity (perception/pipeline.py)."""

    def __init__(self, model_type: str, checkpoint: str, device: str = "cpu", points_per_side: int = 16,
                 min_area: int = 100, pred_iou_thresh: float = 0.88, stability_score_thresh: float = 0.95, sam: Any = None):
        from segment_anything import SamAutomaticMaskGenerator

        self.sam = sam if sam is not None else load_sam(model_type, checkpoint, device)
        self.generator = SamAutomaticMaskGenerator(
            self.sam, points_per_side=points_per_side, pred_iou_thresh=pred_iou_thresh,
            stability_score_thresh=stability_score_thresh, min_mask_region_area=0)
        self.min_area = min_area

    def detect(self, frame: Any, vocabulary: Any) -> list[Detection]:
        out = []
        for proposal in self.generator.generate(np.ascontiguousarray(frame.rgb)):
            if proposal["area"] < self.min_area:
                continue
            x, y, w, h = proposal["bbox"]
            out.append(Detection(label=UNLABELLED, score=float(proposal["predicted_iou"]), box=(x, y, x + w, y + h),
                                 mask=proposal["segmentation"].astype(bool)))
        return out
