"""In-context example retrieval by k-nearest neighbours on instruction embeddings (LLM-Planner 4.3).

Two embedders: TF-IDF (scikit-learn; needs no model) and a sentence encoder (mean-pooled last hidden
states, models/sentence_encoder.py): all-MiniLM-L6-v2 where `conceptagent models fetch --only words`
fetched it (the default, `retriever=auto`), or any local AutoModel folder (BERT as in the paper). Examples recorded
from the task being planned are left out, as in the paper's leave-one-out protocol.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np
import yaml

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.models.sentence_encoder import SentenceEncoder
from conceptagent_ros.paths import config_dir
from conceptagent_ros.planning.prompts import PlanExample
from conceptagent_ros.skills.contract import SkillCall


class Embedder(Protocol):
    def fit(self, texts: Sequence[str]) -> None: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class TfidfEmbedder:
    def __init__(self) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)

    def fit(self, texts: Sequence[str]) -> None:
        self.vectorizer.fit(list(texts))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.vectorizer.transform(list(texts)).todense(), dtype=np.float64)


class EncoderEmbedder:
    """Sentence embeddings from a local encoder (models/sentence_encoder.py): the fetched MiniLM, or
    any BERT-like folder as in the paper."""

    def __init__(self, encoder: SentenceEncoder):
        self.encoder = encoder
        self._seen: dict[str, np.ndarray] = {}  # the bank is embedded once, not once per task

    def fit(self, texts: Sequence[str]) -> None:
        pass

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if missing:
            self._seen.update(zip(missing, self.encoder.embed(missing).astype(np.float64), strict=True))
        return np.stack([self._seen[t] for t in texts])


@lru_cache(maxsize=1)
def _minilm_embedder(encoder: SentenceEncoder) -> EncoderEmbedder:
    return EncoderEmbedder(encoder)


def embedder_for(source: str) -> Embedder:
    """`tfidf`; `minilm` (the fetched all-MiniLM-L6-v2); `auto`: MiniLM where it is fetched, TF-IDF
    otherwise; or the path of a local encoder folder."""
    from conceptagent_ros.models.sentence_encoder import MINILM, SentenceEncoder, fetched_minilm

    if source == "tfidf":
        return TfidfEmbedder()
    if source in ("auto", "minilm"):
        minilm = fetched_minilm()
        if minilm is not None:
            return _minilm_embedder(minilm)
        if source == "minilm":
            from conceptagent_ros.models.store import fetched_path

            fetched_path(MINILM)  # raises the one-line error that names the fetch command
            raise ConfigError("MiniLM is fetched but cannot be loaded: `pip install torch transformers`")
        return TfidfEmbedder()
    return EncoderEmbedder(SentenceEncoder(source))


class ExampleRetriever:
    def __init__(self, examples: Sequence[PlanExample], embedder: Embedder | None = None):
        if not examples:
            raise ConfigError("the example bank is empty")
        self.examples = list(examples)
        self.embedder = embedder or TfidfEmbedder()
        texts = [e.instruction for e in self.examples]
        self.embedder.fit(texts)
        self.matrix = _normalize(self.embedder.embed(texts))

    def nearest(self, instruction: str, k: int, exclude_source: str = "") -> list[PlanExample]:
        """The k examples whose instructions are closest (Euclidean on unit vectors), nearest first."""
        query = _normalize(self.embedder.embed([instruction]))[0]
        distances = np.linalg.norm(self.matrix - query, axis=1)
        order = np.argsort(distances, kind="stable")
        picked = [self.examples[i] for i in order
                  if not (exclude_source and self.examples[i].source == exclude_source)
                  and self.examples[i].instruction.strip().lower() != instruction.strip().lower()]
        return picked[:k]


def _normalize(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def default_bank_path() -> Path:
    return config_dir() / "examples" / "plan_bank.yaml"


@lru_cache(maxsize=4)
def load_example_bank(path: str | None = None) -> tuple[PlanExample, ...]:
    file = Path(path) if path else default_bank_path()
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except OSError as e:
        raise ConfigError(f"cannot read the example bank {file}: {e}") from e
    examples = []
    for i, item in enumerate(data.get("examples", [])):
        try:
            plan = tuple(SkillCall.parse(s) for s in item["plan"])
            examples.append(PlanExample(str(item["instruction"]), plan, str(item.get("source", ""))))
        except (KeyError, TypeError, ValueError) as e:
            raise ConfigError(f"{file}: example {i + 1} is malformed ({e}); needs instruction and plan") from e
    return tuple(examples)
