"""YOLO-World through ultralytics: the vocabulary becomes the model's classes (`set_classes`),
then one forward pass per frame. Weights are an ultralytics .pt file on this machine."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conceptagent_ros.perception.detections import Detection
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.model_files import MissingModelError, expand


class YoloWorldDetector:
    def __init__(self, weights: str, threshold: float = 0.1, device: str = "cpu", image_size: int = 640):
        from ultralytics import YOLOWorld

        path = expand(weights)
        if not path.is_file():
            raise MissingModelError(f"YOLO-World weights {path} are not on this machine: run `conceptagent models fetch`")
        self.model: Any = YOLOWorld(str(path))
        self.threshold = threshold
        self.device = device
        self.image_size = image_size
        self._classes: tuple[str, ...] = ()

    def detect(self, frame: Frame, vocabulary: Sequence[str]) -> list[Detection]:
        vocab = tuple(v.strip() for v in vocabulary if v.strip())
        if not vocab:
            return []
        if vocab != self._classes:  # text embeddings are computed once per vocabulary
            self.model.set_classes(list(vocab))
            self._classes = vocab
        # ultralytics reads numpy images as BGR (OpenCV's order)
        results = self.model.predict(frame.rgb[:, :, ::-1], conf=self.threshold, device=self.device,
                                     imgsz=self.image_size, verbose=False)
        out: list[Detection] = []
        for result in results:
            boxes = result.boxes
            for xyxy, conf, cls in zip(boxes.xyxy.tolist(), boxes.conf.tolist(), boxes.cls.tolist(), strict=True):
                out.append(Detection(label=vocab[int(cls)], score=float(conf), box=tuple(xyxy)))  # type: ignore[arg-type]
        return out
