"""An instruction to a PDDL goal without a language model, by filling slots over its words: each
clause's verb gives a predicate, its noun phrases typed objects of the scene (with what picks them
out: a colour, a room, what they are on), and every word must be read. An instruction is understood
whole or refused with the words that were not understood; it is never turned into a goal that drops
part of what was asked.

- Politeness and filler ("could you", "for me", "please") are read and ignored (config/phrasing.yaml).
- Two requests ("chill the milk and put the bowl away") give both, or a refusal.
- "the X" where several X are known and nothing in the instruction says which is refused; "a X" is
  any X. Where things go, "the X" is any X that fits ("put it on the counter": a weak definite,
  binding.py).
- A heading before a colon ("make toast: slice the bread and heat it") names the whole task; the
  steps after it are the goal. A room it names says where the steps' things are where that picks
  one ("clean up the bathroom: ... put it in the cabinet").
- "it" is what was last acted on, else last named, of the things that can be what is asked
  ("put the apple in the fridge and close it": the fridge; binding.py).
- A word that names nothing known is taken for the scene's name nearest in meaning where one is near
  enough, and refused naming the nearest otherwise ("the rubbish bin": the bin; similar_names.py).
- A request in a polite frame or said as a wish is read from its parse ("would you mind closing the
  fridge", "I need the bread sliced"; frames.py).
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from conceptagent_ros.errors import InstructionError
from conceptagent_ros.planning.free_text.binding import Binder
from conceptagent_ros.planning.free_text.frames import Parse, fetched_parser, imperative
from conceptagent_ros.planning.free_text.known import KnownScene, Nouns
from conceptagent_ros.planning.free_text.lexicon import Lexicon, load_lexicon
from conceptagent_ros.planning.free_text.reader import ClauseReader, Request
from conceptagent_ros.planning.free_text.similar_names import SimilarNames, default_similar_names

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"[a-z0-9_']+|[,;:.!?]")


@dataclass(frozen=True)
class WordModels:
    """What the translator may lean on beyond its lexicon: `similar` guesses what unknown words name
    (MiniLM), `parse` reads polite frames and wishes (spaCy); either None: done without."""

    similar: SimilarNames | None = None
    parse: Parse | None = None

    @classmethod
    def fetched(cls) -> WordModels:
        """Those fetched into the models directory (loaded on first need); none where
        CONCEPTAGENT_WORD_MODELS is off."""
        if os.environ.get("CONCEPTAGENT_WORD_MODELS", "on").lower() in ("off", "0", "no", "false"):
            return cls()
        return cls(default_similar_names(), _LazyParse())


class _LazyParse:
    """spaCy loaded on the first instruction that needs a parse, not on import; called only where
    `available` (_command_in)."""

    def __call__(self, text: str) -> Any:
        parse = fetched_parser()
        assert parse is not None, "called only where available"
        return parse(text)

    @property
    def available(self) -> bool:
        return fetched_parser() is not None


def translate(instruction: str, scene: KnownScene, lexicon: Lexicon | None = None,
              models: WordModels | None = None) -> str:
    """The PDDL goal of `instruction` (already cleaned) on `scene`; InstructionError otherwise.

    Where the instruction as written is not understood it is read again, first of these that is:
    - A heading said aloud has no colon: Whisper writes "Make toast, slice the bread and heat it" or
      "Clean up the bathroom. Wash the toothbrush ..." for "Make toast: slice ...". Without a colon,
      the first comma, else the first full stop before more words, is read as the heading's colon.
    - A polite frame or a wish ("would you mind closing the fridge", "I need the bread sliced") is
      read as the command the parse finds in it (frames.py; `models.parse`).
    Words that name nothing known are taken for the name nearest in meaning where `models.similar`
    finds one near enough (similar_names.py). Guesses and readings are logged."""
    lexicon = lexicon or load_lexicon()
    models = models if models is not None else WordModels.fetched()
    similar = models.similar or SimilarNames(lambda: None)
    try:
        return _translate(instruction, scene, lexicon, similar)
    except InstructionError as as_written:
        cut = _spoken_heading_end(instruction, scene, lexicon, similar)
        if cut is not None:
            try:
                return _translate(instruction[:cut] + ":" + instruction[cut + 1:], scene, lexicon, similar)
            except InstructionError:
                pass
        command = _command_in(instruction, lexicon, models.parse)
        if command is None:
            raise as_written from None
        try:
            goal = _translate(command, scene, lexicon, similar)
        except InstructionError as e:
            raise InstructionError(f"{e} (read as '{command}')") from None
        log.info("reading '%s' as '%s'", instruction, command)
        return goal


def _command_in(instruction: str, lexicon: Lexicon, parse: Parse | None) -> str | None:
    if parse is None or not getattr(parse, "available", True):
        return None
    return imperative(instruction, lexicon, parse)


def _spoken_heading_end(instruction: str, scene: KnownScene, lexicon: Lexicon, similar: SimilarNames) -> int | None:
    """Where a heading said aloud ends (its first comma, else its first full stop before more words),
    or None: there is a colon already, no such mark, or what comes before reads as a request of its
    own ("put the book on the shelf, then ..." -- "make toast" does not, nor "set the table", which
    says not where; "put the book on the shelf" does, though the scene may have two books)."""
    if ":" in instruction:
        return None
    comma, stop = instruction.find(","), instruction.rstrip(" .!?").find(".")
    cut = comma if comma >= 0 else stop
    if cut < 0:
        return None
    nouns = Nouns.of(scene, lexicon)
    for sentence in _split(_tokens(instruction[:cut]), {".", "!", "?", ";"}):
        for words in _clause_words(sentence, lexicon, nouns):
            try:
                ClauseReader(words, lexicon, scene, nouns, similar).request(under_heading=False)
                return None
            except InstructionError:
                continue
    return cut


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("\u2019", "'"))


def _clause_words(steps: list[str], lexicon: Lexicon, nouns: Nouns) -> Iterator[list[str]]:
    """The words of each clause that filler leaves, clauses of filler alone skipped."""
    for clause in _clauses(steps, lexicon, nouns):
        words = _without_filler(clause, lexicon)
        if words:
            yield words


def _translate(instruction: str, scene: KnownScene, lexicon: Lexicon, similar: SimilarNames) -> str:
    nouns = Nouns.of(scene, lexicon)
    binder = Binder(scene)
    literals: list[str] = []
    picked: list[tuple[Request, list[str]]] = []
    for sentence in _split(_tokens(instruction), {".", "!", "?", ";"}):
        heading, steps = _heading(sentence)
        binder.room_hint = [nouns.rooms[r] for r in _rooms_in(heading, nouns)] if heading else []
        for words in _clause_words(steps, lexicon, nouns):
            reader = ClauseReader(words, lexicon, scene, nouns, similar)
            request = reader.request(under_heading=bool(heading))
            for said, name, score in reader.guesses:
                log.info("taking '%s' for '%s' (similarity %.2f)", said, name, score)
            terms = _literals(request, binder, literals)
            if request.kind in ("pick", "find"):
                picked.append((request, terms))
    for request, terms in picked:
        for term in terms:
            if any(term in literal.replace("(", " ").replace(")", " ").split() for literal in literals):
                continue
            if request.kind == "find":
                raise InstructionError(f"'{request.text}': and then? Say what to do with it, e.g. "
                                       f"'{request.text} and put it on the table'")
            literals.append(f"(holding {term})")
    if not literals:
        raise InstructionError("the instruction names no change to make; try e.g. 'put the apple in the fridge'")
    return _goal(literals, binder.variables)


def _split(tokens: list[str], marks: set[str]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token in marks:
            parts.append([])
        else:
            parts[-1].append(token)
    return [p for p in parts if p]


def _heading(sentence: list[str]) -> tuple[list[str], list[str]]:
    if ":" in sentence:
        i = sentence.index(":")
        rest = [w for w in sentence[i + 1:] if w != ":"]
        if rest:
            return sentence[:i], rest
    return [], [w for w in sentence if w != ":"]


def _rooms_in(words: list[str], nouns: Nouns) -> list[tuple[str, ...]]:
    found = []
    i = 0
    while i < len(words):
        room = nouns.rooms_set.match(words, i)
        if room is not None:
            found.append(room)
            i += len(room)
        else:
            i += 1
    return found


def _clauses(words: list[str], lexicon: Lexicon, nouns: Nouns) -> list[list[str]]:
    """Split at ",", "and", "then" where a new request starts: "then", a verb, a thing and where it
    goes ("it goes in the trash"), or a word that cannot start the name of a thing ("and dance", to be
    refused as a request of its own); elsewhere these join things ("the lettuce and the tomato")."""
    clauses: list[list[str]] = [[]]
    i = 0
    while i < len(words):
        word = words[i]
        if word in (",", "and", "then"):
            j = i
            while j < len(words) and words[j] in (",", "and", "then"):
                j += 1
            if j < len(words) and (_starts_request(words, j, lexicon) or "then" in words[i:j]
                                   or not _may_name_a_thing(words[j], lexicon, nouns)):
                clauses.append([])
                i = j
                continue
            verb = _complete_placing(clauses[-1], lexicon)
            if j < len(words) and verb and _names_a_place(words[j:], lexicon):
                # "put the apple in the fridge and the bread on the table": the verb again
                clauses.append(list(verb))
                i = j
                continue
        clauses[-1].append(word)
        i += 1
    return [c for c in clauses if c]


def _may_name_a_thing(word: str, lexicon: Lexicon, nouns: Nouns) -> bool:
    return (word in lexicon.determiners or word in lexicon.pronouns or word in lexicon.colours
            or word in lexicon.state_adjectives or any(word == w[0] for w in nouns.things)
            or any(word == w[0] for w in nouns.rooms) or word in nouns.ids
            or lexicon.filler.match([word], 0) is not None)


def _complete_placing(clause: list[str], lexicon: Lexicon) -> tuple[str, ...] | None:
    """The place verb of a clause that already says where its thing goes, else None."""
    words = _without_filler(clause, lexicon)
    verb = lexicon.place_verbs.match(words, 0)
    if verb is None:
        return None
    return verb if _names_a_place(words[len(verb):], lexicon) else None


def _names_a_place(words: list[str], lexicon: Lexicon) -> bool:
    for i in range(len(words)):
        if words[i] in (",", "and"):
            return False
        if lexicon.into.match(words, i) is not None:
            return True
    return False


def _starts_request(words: list[str], i: int, lexicon: Lexicon) -> bool:
    while (filler := lexicon.filler.match(words, i)) is not None:
        i += len(filler)
    if lexicon.verbs.match(words, i) is not None:
        return True
    for j in range(i, min(i + 6, len(words))):  # "the newspaper goes in the trash"
        if words[j] in (",", "and"):
            return False
        if lexicon.belongs_verbs.match(words, j) is not None:
            return True
    return False


def _without_filler(words: list[str], lexicon: Lexicon) -> list[str]:
    kept: list[str] = []
    i = 0
    while i < len(words):
        filler = lexicon.filler.match(words, i)
        if filler is not None:
            i += len(filler)
            continue
        if words[i] != ",":
            kept.append(words[i])
        i += 1
    return kept


@lru_cache(maxsize=1)
def _needs() -> dict[str, str]:
    """The affordance a state predicate needs of its thing (config/predicates.yaml's `requires`)."""
    from conceptagent_ros.scene.symbolic import load_predicates

    return {p.name: p.requires[0] for p in load_predicates() if p.requires and p.requires[0]}


def _literals(request: Request, binder: Binder, literals: list[str]) -> list[str]:
    def add(literal: str) -> None:
        if literal not in literals:
            literals.append(literal)

    needs = _needs().get(request.predicate) if request.kind == "state" else None
    objects = binder.terms(request.objects, needs=needs)
    if request.kind == "state":
        for term in objects:
            add(f"({request.predicate} {term})" if request.value else f"(not ({request.predicate} {term}))")
    if request.place is not None:
        place = binder.destination(request.place, other_than=objects)
        binder.remember_place(place)
        for term in objects:
            if term == place:
                raise InstructionError(f"'{request.text}' puts a thing in itself")
            if isinstance(place, tuple):  # any of these places
                add("(or " + " ".join(f"(in {term} {p})" for p in place if p != term) + ")")
            else:
                add(f"(in {term} {place})")
    binder.acted_on.extend(objects)
    return objects


def _goal(literals: list[str], variables: dict[str, str]) -> str:
    body = literals[0] if len(literals) == 1 else "(and " + " ".join(literals) + ")"
    if not variables:
        return body
    # every variable is some literal's term: a bound phrase always ends up in a literal (a thing only
    # picked up is held), so all are declared
    decl = " ".join(f"{v} - {c}" for c, v in variables.items())
    return f"(exists ({decl}) {body})"
