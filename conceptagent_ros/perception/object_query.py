"""Open-vocabulary queries on the fused map: text -> objects ranked by score.

With an embedder, CLIP's text embedding against each object's running image embedding ("mug"
finds the cup); without one, words of the query against each object's label."""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from conceptagent_ros.perception.detections import Embedder, normalize_rows
from conceptagent_ros.perception.fusion import MapObject
from conceptagent_ros.perception.geometry import OrientedBox


@dataclass(frozen=True)
class QueryHit:
    id: str
    label: str
    score: float
    centroid: tuple[float, float, float]
    box: OrientedBox


def _words(text: str) -> set[str]:
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in re.findall(r"[a-z0-9]+", text.lower())}


def lexical_score(query: str, label: str) -> float:
    """Share of the label's words the query names (plural-blind): 'the red mug' -> mug 1.0."""
    q, lab = _words(query), _words(label.replace("_", " "))
    return len(q & lab) / len(lab) if lab else 0.0


def query_objects(objects: Iterable[MapObject], text: str, embedder: Embedder | None = None,
                  top_k: int = 5, min_score: float = -math.inf) -> list[QueryHit]:
    if not text.strip():
        raise ValueError("empty query")
    if top_k <= 0:
        raise ValueError(f"top_k must be positive, got {top_k}")
    items = list(objects)
    if not items:
        return []
    with_emb = [o for o in items if o.embedding is not None]
    scores: dict[str, float] = {}
    if embedder is not None and with_emb:
        text_vec = normalize_rows(np.asarray(embedder.embed_texts([text]), dtype=np.float32))[0]
        matrix = np.stack([o.embedding for o in with_emb])  # type: ignore[misc]
        for obj, score in zip(with_emb, matrix @ text_vec, strict=True):
            scores[obj.id] = float(score)
    for obj in items:
        if obj.id not in scores:
            scores[obj.id] = lexical_score(text, obj.label)
    # Ties broken by how often the object was seen: the surer object first.
    ranked = sorted(items, key=lambda o: (-scores[o.id], -o.detections, o.id))
    return [
        QueryHit(o.id, o.label, scores[o.id], tuple(float(v) for v in o.centroid), o.box)  # type: ignore[arg-type]
        for o in ranked[:top_k] if scores[o.id] > min_score
    ]
