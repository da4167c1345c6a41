"""CLIP (transformers) image and text embeddings in one space: masked crops of detections, and
query texts, as unit vectors."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from conceptagent_ros.perception.detections import normalize_rows
from conceptagent_ros.perception.model_files import load_pretrained


class ClipEmbedder:
    def __init__(self, model: str, device: str = "cpu", batch: int = 32):
        from transformers import AutoProcessor, CLIPModel

        self.processor = load_pretrained(AutoProcessor, model)
        self.model = load_pretrained(CLIPModel, model).to(device).eval()
        self.device = device
        self.batch = batch

    @property
    def dim(self) -> int:
        return int(self.model.config.projection_dim)

    def embed_images(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        import torch

        if not crops:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = []
        for i in range(0, len(crops), self.batch):
            inputs = self.processor(images=list(crops[i:i + self.batch]), return_tensors="pt").to(self.device)
            with torch.no_grad():
                feats = self.model.get_image_features(**inputs)
            out.append(_tensor(feats))
        return normalize_rows(np.concatenate(out)).astype(np.float32)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        inputs = self.processor(text=list(texts), return_tensors="pt", padding=True).to(self.device)
        with torch.no_grad():
            feats = self.model.get_text_features(**inputs)
        return normalize_rows(_tensor(feats)).astype(np.float32)


def _tensor(feats: object) -> np.ndarray:
    """get_*_features returns a tensor, or (newer transformers) an output whose pooler holds it."""
    value: Any = getattr(feats, "pooler_output", feats)
    return value.detach().cpu().numpy()  # type: ignore[no-any-return]
