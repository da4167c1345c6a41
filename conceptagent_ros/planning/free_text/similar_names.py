"""Words the translator does not know, matched to the scene's names by sentence-embedding similarity.

"the rubbish bin", "the bookshelf": no category, synonym or id of the scene is called that, but one
is near in meaning. The said words and every name the scene's things, objects and rooms go by are
embedded (MiniLM, fetched by `conceptagent models fetch --model all-minilm-l6-v2`), and a name is
taken only where it is close enough (`accept`) and clearly closer than the next thing's (`margin`);
otherwise the translator refuses and names the nearest. Thresholds were set on a development list of
words (config/words/similar_names_dev.yaml) and live in config/phrasing.yaml (`similar_names`).

A word that only contains a known name as its first part is a different thing ("pillowcase", not a
pillow; "doorway", not a door; "bin bag", not a bin) and is never taken for it; nor is a word that is
only part of a name ("paper" of toilet paper, "toilet" of toilet paper, "table" where there are a
dining table and a desk table).
One that ends with a name is that thing ("bookshelf", "teacup", "potted plant"): where that name is
the nearest and near enough, no margin is asked of it, unless another thing's name ends so too
("standing lamp" where there are a lamp and a floor lamp). One that ends as a name does but starts
otherwise is another kind of it ("kitchen roll", not a "toilet roll") and is not taken.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

import numpy as np
import yaml

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.paths import config_dir


class Encoder(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray: ...  # unit-length rows


@dataclass(frozen=True)
class Name:
    """A name a thing of the scene goes by, and what it names."""

    said: str  # "trash can"
    target: str  # a category, an object id or a room (category or id)
    kind: str  # "thing" | "id" | "room"


@dataclass(frozen=True)
class Match:
    name: Name
    score: float  # cosine similarity of the said words and the name


@dataclass
class SimilarNames:
    """Guesses what unknown words name, or None; `encoder` is loaded on first use (None: never guesses)."""

    load_encoder: Callable[[], Encoder | None]
    accept: float = 0.62
    margin: float = 0.08
    _encoder: Encoder | None = field(default=None, init=False, repr=False)
    _loaded: bool = field(default=False, init=False, repr=False)
    _cache: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)

    def encoder(self) -> Encoder | None:
        if not self._loaded:
            self._encoder, self._loaded = self.load_encoder(), True
        return self._encoder

    def ranked(self, said: str, names: Sequence[Name]) -> list[Match]:
        """Each target's nearest name, nearest target first; [] without an encoder."""
        encoder = self.encoder()
        if encoder is None or not names:
            return []
        missing = [t for t in {said, *(n.said for n in names)} if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, encoder.embed(missing), strict=True))
        query = self._cache[said]
        best: dict[tuple[str, str], Match] = {}
        for name in names:
            score = float(np.dot(self._cache[name.said], query))
            key = (name.kind, name.target)
            if key not in best or score > best[key].score:
                best[key] = Match(name, score)
        return sorted(best.values(), key=lambda m: (-m.score, m.name.target))

    def guess(self, said: str, names: Sequence[Name]) -> Match | None:
        """The name `said` means, where one is near enough and clearly nearest; else None."""
        ranked = self.ranked(said, names)
        if not ranked:
            return None
        top = ranked[0]
        if top.score < self.accept:
            return None
        its_names = [n.said for n in names if n.target == top.name.target and n.kind == top.name.kind]
        # a compound ends in what it is ("bookshelf" is a shelf, "teacup" a cup): the nearest name
        # being its end is the margin
        closed = any(_ends_with(said, n) for n in its_names) and not any(
            _sibling(said, n.said) for n in names if n.target != top.name.target)  # "standing lamp": a floor lamp?
        if not closed and len(ranked) > 1 and top.score - ranked[1].score < self.margin:
            return None
        if any(_only_starts_with(said, n) or _part_of(said, n) for n in its_names):
            return None
        if not closed and any(_sibling(said, n) for n in its_names):
            return None
        return top


def _only_starts_with(said: str, name: str) -> bool:
    """`said` has `name` as a part before its last word, or as the start of its one word, and is more:
    a compound naming something else ("bin bag", "pillowcase")."""
    words, known = said.split(), name.split()
    if len(words) > len(known):
        return any(words[i:i + len(known)] == known for i in range(len(words) - len(known)))
    return len(words) == 1 == len(known) and said != name and said.startswith(name)


def _ends_with(said: str, name: str) -> bool:
    """`said` is more than `name` and ends with it: one word ("bookshelf", "shelf") or in words
    ("potted plant", "plant")."""
    words, known = said.split(), name.split()
    if len(words) == 1 == len(known):
        return said != name and said.endswith(name)
    return len(words) > len(known) and words[-len(known):] == known


def _sibling(said: str, name: str) -> bool:
    """Another kind of the same thing, told apart by the word before: "kitchen roll" is no "toilet
    roll", though both are rolls."""
    words, known = said.split(), name.split()
    return len(words) > 1 and len(known) > 1 and words[-1] == known[-1] and words[:-1] != known[:-1]


def _part_of(said: str, name: str) -> bool:
    """`said` is only part of the name: its end, a broader word ("paper" of "toilet paper", "table" of
    "dining table"), or its start, another thing ("toilet" of "toilet paper", "loo" of "loo roll");
    clippings that people use ("remote", "mobile") are the lexicon's synonyms."""
    words, known = said.split(), name.split()
    return len(words) < len(known) and any(known[i:i + len(words)] == words for i in range(len(known)))


@lru_cache(maxsize=1)
def default_similar_names() -> SimilarNames:
    """MiniLM when it is fetched (loaded the first time a word is unknown), with the shipped thresholds."""
    from conceptagent_ros.models.sentence_encoder import fetched_minilm

    path = config_dir() / "phrasing.yaml"
    try:
        settings = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("similar_names") or {}
        return SimilarNames(fetched_minilm, accept=float(settings.get("accept", 0.62)),
                            margin=float(settings.get("margin", 0.08)))
    except (OSError, yaml.YAMLError, TypeError, ValueError) as e:
        raise ConceptAgentError(f"cannot read similar_names from {path}: {e}") from e
