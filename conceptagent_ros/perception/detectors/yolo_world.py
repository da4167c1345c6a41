"""YOLO-World through ultralytics: the vocabulary's CLIP text embeddings become the model's
classes, then one forward pass per frame. Weights are an ultralytics .pt file on this machine.

The text side is CLIP ViT-B/32 through transformers (`text_model`, fetched by `conceptagent models
fetch` like every other model), not ultralytics' own `set_classes`: that one installs OpenAI's
`clip` package from git and downloads its weights the first time a vocabulary is set, which a
robot without internet cannot do and this stack never does at run time. Both are the same network
(openai/clip-vit-base-patch32 is OpenAI's ViT-B/32 converted), and the embeddings are L2-normalised
as ultralytics' CLIP wrapper does, so the detector sees what it was trained with.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conceptagent_ros.perception.detections import Detection
from conceptagent_ros.perception.embedders import ClipEmbedder
from conceptagent_ros.perception.frames import Frame
from conceptagent_ros.perception.model_files import MissingModelError, expand

DEFAULT_TEXT_MODEL = "openai/clip-vit-base-patch32"


class YoloWorldDetector:
    def __init__(self, weights: str, threshold: float = 0.1, device: str = "cpu", image_size: int = 640,
                 text_model: str = DEFAULT_TEXT_MODEL):
        from ultralytics import YOLOWorld

        path = expand(weights)
        if not path.is_file():
            raise MissingModelError(f"YOLO-World weights {path} are not on this machine: run `conceptagent models fetch`")
        self.model: Any = YOLOWorld(str(path))
        self.text = ClipEmbedder(text_model, device)  # its text embeddings are unit vectors already
        world: Any = self.model.model
        expected = int(world.txt_feats.shape[-1])
        if expected != self.text.dim:
            raise MissingModelError(f"YOLO-World {path.name} reads {expected}-d text embeddings but {text_model} gives "
                                    f"{self.text.dim}-d: set detector.text_model to the CLIP it was trained with")
        self.threshold = threshold
        self.device = device
        self.image_size = image_size
        self._classes: tuple[str, ...] = ()

    def _set_classes(self, vocab: tuple[str, ...]) -> None:
        # What ultralytics' WorldModel.set_classes stores, with our text embeddings: the per-class
        # features the head matches regions against, the head's class count, the names results carry.
        import torch

        world = self.model.model
        parameter = next(world.parameters())
        features = torch.from_numpy(self.text.embed_texts(vocab)).to(parameter.device, parameter.dtype)
        world.txt_feats = features.reshape(1, len(vocab), -1)
        world.model[-1].nc = len(vocab)
        world.names = dict(enumerate(vocab))
        self.model.predictor = None  # rebuilt for the new classes on the next predict
        self._classes = vocab

    def detect(self, frame: Frame, vocabulary: Sequence[str]) -> list[Detection]:
        vocab = tuple(v.strip() for v in vocabulary if v.strip())
        if not vocab:
            return []
        if vocab != self._classes:  # text embeddings are computed once per vocabulary
            self._set_classes(vocab)
        # ultralytics reads numpy images as BGR (OpenCV's order)
        results = self.model.predict(frame.rgb[:, :, ::-1], conf=self.threshold, device=self.device,
                                     imgsz=self.image_size, verbose=False)
        out: list[Detection] = []
        for result in results:
            boxes = result.boxes
            for xyxy, conf, cls in zip(boxes.xyxy.tolist(), boxes.conf.tolist(), boxes.cls.tolist(), strict=True):
                out.append(Detection(label=vocab[int(cls)], score=float(conf), box=tuple(xyxy)))  # type: ignore[arg-type]
        return out
