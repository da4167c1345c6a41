"""The words the no-LLM translator knows (config/phrasing.yaml), as word tuples it can match at a
position of a tokenised instruction, longest first."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import yaml

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.paths import config_dir

Words = tuple[str, ...]


def plural(word: str) -> str:
    """English plural of a noun's last word: shelf -> shelves, glass -> glasses, keys -> keys."""
    if word.endswith("fe"):
        return word[:-2] + "ves"
    if word.endswith("f") and not word.endswith("ff"):
        return word[:-1] + "ves"
    if word.endswith(("s", "sh", "ch", "x", "z")):
        return word if word.endswith("s") and not word.endswith("ss") else word + "es"
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return word[:-1] + "ies"
    return word + "s"


def words_of(phrase: str) -> Words:
    return tuple(phrase.lower().replace("_", " ").split())


class PhraseSet:
    """Phrases (word tuples) matched at a position of a word list, the longest that fits."""

    def __init__(self, phrases: Iterable[str | Words]):
        self.phrases = frozenset(p if isinstance(p, tuple) else words_of(p) for p in phrases)
        self.longest = max((len(p) for p in self.phrases), default=0)

    def match(self, words: Sequence[str], i: int) -> Words | None:
        for n in range(min(self.longest, len(words) - i), 0, -1):
            candidate = tuple(words[i:i + n])
            if candidate in self.phrases:
                return candidate
        return None

    def __contains__(self, phrase: object) -> bool:
        return phrase in self.phrases


@dataclass(frozen=True)
class Lexicon:
    synonyms: dict[Words, str]  # name people use -> category
    filler: PhraseSet
    indefinite: frozenset[str]
    definite: frozenset[str]
    pronouns: frozenset[str]
    there: frozenset[str]
    state_verbs: dict[Words, tuple[str, bool]]
    state_verb_particles: dict[Words, PhraseSet]
    place_verbs: PhraseSet
    belongs_verbs: PhraseSet
    discard_verbs: PhraseSet
    discard_to: str
    pick_verbs: PhraseSet
    find_verbs: PhraseSet
    light_verbs: PhraseSet  # "give the mug a wash": a verb whose noun says what to do
    place_particles: PhraseSet
    into: PhraseSet
    source: PhraseSet
    near: PhraseSet
    relative: PhraseSet
    state_adjectives: dict[str, tuple[str, bool]]
    colours: frozenset[str]
    quantities: frozenset[str]
    attribute_synonyms: dict[str, str] = field(default_factory=dict)  # "big" -> "large"
    room_synonyms: dict[Words, str] = field(default_factory=dict)  # "lounge" -> "living_room"
    # lemmas of verbs whose relative clause says where its thing is ("the mug someone LEFT in the sink")
    locative_verbs: frozenset[str] = frozenset()

    @cached_property
    def verbs(self) -> PhraseSet:
        """Every verb a clause may start with."""
        return PhraseSet([*self.state_verbs, *self.place_verbs.phrases, *self.discard_verbs.phrases,
                          *self.pick_verbs.phrases, *self.find_verbs.phrases, *self.light_verbs.phrases,
                          ("turn",), ("switch",), ("power",)])

    @cached_property
    def state_verb_set(self) -> PhraseSet:
        return PhraseSet(self.state_verbs)

    @cached_property
    def located(self) -> PhraseSet:
        """Where a thing is ("the apple in the bowl"): the place words, less those that only say
        where a thing goes ("to the sink")."""
        return PhraseSet(p for p in self.into.phrases if p not in {("to",), ("into",), ("onto",)})

    @cached_property
    def function_words(self) -> frozenset[str]:
        """Words that are never part of a thing's name: determiners, pronouns, and the words of
        prepositions, particles and relative clauses ("up" of "clean up", "in", "that")."""
        phrases = [*self.into.phrases, *self.source.phrases, *self.near.phrases, *self.relative.phrases,
                   *self.place_particles.phrases, *(p for s in self.state_verb_particles.values() for p in s.phrases)]
        return (self.indefinite | self.definite | self.pronouns | self.there | self.quantities
                | {w for p in phrases for w in p} | {"and", ","})

    @property
    def determiners(self) -> frozenset[str]:
        return self.indefinite | self.definite


def _pairs(data: dict[str, Any], key: str) -> dict[Words, tuple[str, bool]]:
    return {words_of(k): (str(v[0]), bool(v[1])) for k, v in (data.get(key) or {}).items()}


@lru_cache(maxsize=1)
def load_lexicon() -> Lexicon:
    path = config_dir() / "phrasing.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ConceptAgentError(f"cannot read the translator's words from {path}: {e}") from e
    lists = {k: [str(x) for x in (data.get(k) or [])] for k in (
        "filler", "indefinite", "definite", "pronouns", "there", "place_verbs", "belongs_verbs", "discard_verbs",
        "pick_verbs", "find_verbs", "light_verbs", "place_particles", "into", "from", "near", "relative", "colours",
        "quantities", "locative_verbs")}
    return Lexicon(
        synonyms={words_of(k): str(v) for k, v in (data.get("synonyms") or {}).items()},
        filler=PhraseSet(lists["filler"]),
        indefinite=frozenset(lists["indefinite"]), definite=frozenset(lists["definite"]),
        pronouns=frozenset(lists["pronouns"]), there=frozenset(lists["there"]),
        state_verbs=_pairs(data, "state_verbs"),
        state_verb_particles={words_of(k): PhraseSet(v) for k, v in (data.get("state_verb_particles") or {}).items()},
        place_verbs=PhraseSet(lists["place_verbs"]), belongs_verbs=PhraseSet(lists["belongs_verbs"]),
        discard_verbs=PhraseSet(lists["discard_verbs"]), discard_to=str(data.get("discard_to", "garbage_can")),
        pick_verbs=PhraseSet(lists["pick_verbs"]), find_verbs=PhraseSet(lists["find_verbs"]),
        light_verbs=PhraseSet(lists["light_verbs"]),
        place_particles=PhraseSet(lists["place_particles"]),
        into=PhraseSet(lists["into"]), source=PhraseSet(lists["from"]), near=PhraseSet(lists["near"]),
        relative=PhraseSet(lists["relative"]),
        state_adjectives={str(k): (str(v[0]), bool(v[1])) for k, v in (data.get("state_adjectives") or {}).items()},
        colours=frozenset(lists["colours"]), quantities=frozenset(lists["quantities"]),
        attribute_synonyms={str(k): str(v) for k, v in (data.get("attribute_synonyms") or {}).items()},
        room_synonyms={words_of(k): str(v) for k, v in (data.get("room_synonyms") or {}).items()},
        locative_verbs=frozenset(lists["locative_verbs"]),
    )
