"""Sentence embeddings from a local encoder: the fetched all-MiniLM-L6-v2, or any BERT-like folder.

all-MiniLM-L6-v2 is a sentence-transformers model whose pipeline (its modules.json) is the
transformer, the mean of the last hidden states over the real tokens, then unit length; that is
computed here with transformers alone, so sentence-transformers is not needed. The same code embeds
with any local AutoModel folder (BERT as in LLM-Planner's retriever), normalised the same way.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from conceptagent_ros.errors import ConfigError

MINILM = "all-minilm-l6-v2"  # the catalogue's name of the default encoder


class SentenceEncoder:
    """Unit-length sentence embeddings: cosine similarity is their dot product."""

    def __init__(self, name_or_path: str):
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as e:
            raise ConfigError("sentence embeddings need `pip install torch transformers`") from e
        self._torch = torch
        self.source = name_or_path
        self.tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        self.model = AutoModel.from_pretrained(name_or_path).eval()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dims) float32, each row of unit length (a row of zeros stays zero)."""
        if not texts:
            return np.zeros((0, int(self.model.config.hidden_size)), dtype=np.float32)
        with self._torch.no_grad():
            batch = self.tokenizer(list(texts), padding=True, truncation=True, return_tensors="pt")
            hidden = self.model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = ((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)).numpy().astype(np.float32)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.where(norms == 0, 1.0, norms)


@lru_cache(maxsize=1)
def fetched_minilm() -> SentenceEncoder | None:
    """The fetched MiniLM encoder (loaded once per process), or None where it is not fetched or torch
    and transformers are missing: the callers then do without (TF-IDF, exact words)."""
    from conceptagent_ros.models.store import is_fetched, lookup, model_file

    model = lookup(MINILM)
    if not is_fetched(model):
        return None
    try:
        return SentenceEncoder(str(model_file(model)))
    except ConfigError:
        return None
