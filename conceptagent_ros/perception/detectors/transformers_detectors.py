"""Open-vocabulary detectors from transformers: OWL-ViT, OWLv2 and Grounding DINO, loaded with
from_pretrained from a local folder or the Hugging Face cache (never fetched at run time)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from conceptagent_ros.perception.detections import Detection
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.model_files import load_pretrained


def _clip_box(box: Sequence[float], width: int, height: int) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (float(v) for v in box)
    return (max(0.0, min(x0, width)), max(0.0, min(y0, height)), max(0.0, min(x1, width)), max(0.0, min(y1, height)))


def _phrase_to_label(phrase: str, vocabulary: Sequence[str]) -> str | None:
    """Grounding DINO answers with the prompt's words it matched ("red", "red apple", "cup [SEP]"):
    map them back to the vocabulary entry sharing the largest share of its words; None when the
    phrase names nothing asked for."""
    words = {w for w in re.split(r"[\s.]+", re.sub(r"\[[A-Z]+\]", " ", phrase.lower())) if w}
    best, best_share = None, 0.0
    for entry in vocabulary:
        entry_words = set(entry.lower().split())
        share = len(entry_words & words) / len(entry_words) if entry_words else 0.0
        if share > best_share:
            best, best_share = entry, share
    return best


class _ZeroShotDetector:
    """A transformers zero-shot detector: its processor and model, loaded from local files."""

    def __init__(self, model: str, threshold: float, device: str, nms_iou: float):
        from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor

        self.processor = load_pretrained(AutoProcessor, model)
        self.model = load_pretrained(AutoModelForZeroShotObjectDetection, model).to(device).eval()
        self.threshold = threshold
        self.device = device
        self.nms_iou = nms_iou

    def _run(self, **processor_inputs: Any) -> tuple[Any, Any]:
        """The processor's inputs and the model's outputs for them, without gradients."""
        import torch

        inputs = self.processor(return_tensors="pt", **processor_inputs)
        with torch.no_grad():
            return inputs, self.model(**inputs.to(self.device))


class OwlDetector(_ZeroShotDetector):
    """OWL-ViT (`kind: owlvit`) and OWLv2 (`kind: owlv2`): one query per vocabulary entry."""

    def __init__(self, model: str, threshold: float = 0.1, prompt: str = "a photo of a {}", device: str = "cpu",
                 nms_iou: float = 0.5):
        super().__init__(model, threshold, device, nms_iou)
        self.prompt = prompt

    def detect(self, frame: Frame, vocabulary: Sequence[str]) -> list[Detection]:
        vocab = [v.strip() for v in vocabulary if v.strip()]
        if not vocab:
            return []
        h, w = frame.rgb.shape[:2]
        _, outputs = self._run(text=[[self.prompt.format(v) for v in vocab]], images=frame.rgb, padding=True,
                               truncation=True)
        # OWLv2 pads the image to a square: boxes come back in the padded frame's scale
        size = max(h, w) if "owlv2" in type(self.model).__name__.lower() else None
        target = [(size, size)] if size else [(h, w)]
        result = self.processor.post_process_grounded_object_detection(
            outputs=outputs, threshold=self.threshold, target_sizes=target)[0]
        return _non_max_suppressed([
            Detection(label=vocab[int(label)], score=float(score), box=_clip_box(box.tolist(), w, h))
            for score, label, box in zip(result["scores"], result["labels"], result["boxes"], strict=True)
        ], self.nms_iou)


class GroundingDinoDetector(_ZeroShotDetector):
    """Grounding DINO (`kind: grounding_dino`): the vocabulary as one prompt, "cup. bowl. table."."""

    def __init__(self, model: str, threshold: float = 0.3, text_threshold: float = 0.25, device: str = "cpu",
                 nms_iou: float = 0.5):
        super().__init__(model, threshold, device, nms_iou)
        self.text_threshold = text_threshold

    def detect(self, frame: Frame, vocabulary: Sequence[str]) -> list[Detection]:
        vocab = [v.strip().lower() for v in vocabulary if v.strip()]
        if not vocab:
            return []
        h, w = frame.rgb.shape[:2]
        inputs, outputs = self._run(images=frame.rgb, text=". ".join(vocab) + ".")
        result: dict[str, Any] = self.processor.post_process_grounded_object_detection(
            outputs, inputs["input_ids"], threshold=self.threshold, text_threshold=self.text_threshold,
            target_sizes=[(h, w)])[0]
        phrases = result.get("text_labels") or result.get("labels") or []
        found = []
        for score, phrase, box in zip(result["scores"], phrases, result["boxes"], strict=True):
            label = _phrase_to_label(str(phrase), vocab)
            if label is not None:
                found.append(Detection(label=label, score=float(score), box=_clip_box(box.tolist(), w, h)))
        return _non_max_suppressed(found, self.nms_iou)


def _iou(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _non_max_suppressed(detections: list[Detection], iou: float) -> list[Detection]:
    """Per label, drop boxes that overlap a better one (these models propose one box per patch)."""
    kept: list[Detection] = []
    for det in sorted(detections, key=lambda d: -d.score):
        if det.box[2] <= det.box[0] or det.box[3] <= det.box[1]:
            continue  # a box squeezed to nothing by the image border
        if all(k.label != det.label or _iou(k.box, det.box) < iou for k in kept):
            kept.append(det)
    return kept


def boxes_array(detections: Sequence[Detection]) -> np.ndarray:
    return np.array([d.box for d in detections], dtype=float).reshape(-1, 4)
