"""Requests said as wishes or wrapped in politeness, read from a dependency parse into the command
the reader understands.

"would you be so kind as to put the apple in the fridge", "do me a favour and close the fridge",
"would you mind closing the fridge", "I need the bread sliced", "make sure the fridge is closed",
"I want the lamp on": the request is a verb the parse puts under another (`advcl`, `xcomp`, `ccomp`,
`conj`), or a wished-for state of a thing. spaCy's small English pipeline (fetched by `conceptagent
models fetch --model en-core-web-sm`) parses the sentence; the request is then said as the reader's
command ("put the apple in the fridge", "close the fridge", "slice the bread", "turn on the lamp").
The translator reads an instruction this way only when it does not understand it as written, so a
parse never changes what was understood without it.

"I would like the apple in the fridge" is left alone: it may ask for the apple that is in the fridge.

A relative clause that says only where its thing is ("the mug that someone left in the sink", "the
book that's still lying on the shelf") is read as the place ("the mug that is in the sink"): the parse
finds the clause, the lexicon's locative verbs say it is about a place. Pronouns are not resolved here: the
small pipeline has no coreference, so "it" and "them" stay with the reader's binding (binding.py).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from conceptagent_ros.planning.free_text.lexicon import Lexicon

log = logging.getLogger(__name__)

Parse = Callable[[str], Any]  # text -> a spaCy Doc

_UNDER = ("advcl", "xcomp", "ccomp", "conj")  # how a request verb hangs under a polite frame
_WISHES = {"need", "want", "like", "love", "prefer", "wish", "make", "get", "have", "keep", "leave"}
# "do me a favour and ...", "be a dear and ..."
_FRAME_NOUNS = {"favour", "favor", "help", "moment", "chance", "time", "dear", "star", "love", "darling", "sweetheart"}
_ADDRESSEE = {"you", "u"}  # "if you could turn off ...": a request; "the bread sliced": a wished state


def imperative(instruction: str, lexicon: Lexicon, parse: Parse) -> str | None:
    """The instruction with each sentence's request said as a command and each relative clause that
    says where its thing is said as that place; None where the parse shows nothing to rewrite."""
    doc = parse(instruction)
    reduced = _places_for_relative_clauses(doc, lexicon)
    if reduced is not None:
        doc = parse(reduced)
    said, changed = [], reduced is not None
    for sentence in doc.sents:
        command = _command(sentence, lexicon)
        changed |= command is not None
        said.append(command if command is not None else sentence.text)
    return " ".join(said) if changed else None


def _command(sentence: Any, lexicon: Lexicon) -> str | None:
    root = sentence.root
    if root.lemma_.lower() in _WISHES and (wished := _wished_state(sentence, root, lexicon)) is not None:
        return wished  # "I need the bread sliced", "get the mug washed"
    if _request_verb(root, lexicon) is not None:
        return None  # already a command ("put the apple in the fridge")
    verb = _verb_under(root, lexicon)
    if verb is not None:
        # the frame before the verb is dropped ("would you be so kind as to", "if you could"); one
        # that names a thing may say more than politeness ("if the fridge is open, ...") and is not
        if any(t.pos_ in ("NOUN", "PROPN", "NUM") and t.lower_ not in _FRAME_NOUNS
               for t in sentence if t.i < verb.i):
            return None
        return " ".join(_as_command(t, lexicon) for t in sentence if t.i >= verb.i)
    verb = _state_verb_for(root, lexicon)
    if verb is not None and any(t.lemma_.lower() in _WISHES for t in sentence if t.i != root.i):
        # "make sure the fridge is closed": the parse roots the sentence at the state
        things = [t for t in root.subtree if t.dep_ in ("nsubj", "nsubjpass") and t.pos_ in ("NOUN", "PROPN")]
        if things and _said_all(sentence, things[0], root):
            return f"{verb} {_phrase(things[0], stop=root)}"
    return None


_RELATIVE_PRONOUNS = {"that", "which", "who", "whom"}
_STILL = {"still", "currently", "now", "just", "already", "presently", "right"}  # "that is still in ..."


def _places_for_relative_clauses(doc: Any, lexicon: Lexicon) -> str | None:
    """The text with each relative clause that says where its thing is said as the reader's "that
    is" and the place ("the mug that someone left in the sink" -> "the mug that is in the sink", "the
    book that's still lying on the shelf" -> "the book that is on the shelf"); None where there is
    none. The clause is one under a noun (_relative_clause), its verb one of the lexicon's locative
    verbs, and its words before the first place it names ("in", "on top of", "next to" and a thing)
    say nothing else: a relative pronoun, an auxiliary, "still", who left the thing there. The
    rest is read as written, so a clause that says more ("the book that was never on the table", "the
    book I read on the sofa": read is no locative verb) leaves the instruction refused as before."""
    frames: dict[int, int] = {}  # first word of a clause's frame -> its last
    for verb in doc:
        if not _relative_clause(verb) or verb.lemma_.lower() not in lexicon.locative_verbs:
            continue
        place = next((c for c in verb.children if c.i > verb.i and _says_a_place(c, lexicon)), None)
        if place is None:
            continue
        frame = [t for t in verb.subtree if t.i < place.left_edge.i]
        if all(t.i == verb.i or _only_frames_a_place(t) for t in frame) and \
                not any(c.dep_ == "neg" for c in verb.children):
            frames[frame[0].i] = frame[-1].i
    if not frames:
        return None
    # the frame said as the reader's own lead-in to where a thing is ("the mug that is in the sink")
    words, skip_to = [], -1
    for t in doc:
        if t.i in frames:
            words.append("that is ")
            skip_to = frames[t.i]
        elif t.i > skip_to:
            words.append(t.text_with_ws)
    return "".join(words).strip()


def _relative_clause(verb: Any) -> bool:
    """Whether the verb heads a clause that says which thing its noun is: the parse's `relcl` or
    `acl` under a noun, or a clause the small pipeline parses as a complement ("wash the mug that
    someone left in the sink": "that" a subordinating mark) that starts with "that" or "which" right
    after a noun."""
    if verb.dep_ in ("relcl", "acl"):
        return verb.head.pos_ in ("NOUN", "PROPN")
    start = verb.left_edge
    return verb.dep_ in ("ccomp", "advcl") and start.i > 0 and start.lower_ in ("that", "which") \
        and start.doc[start.i - 1].pos_ in ("NOUN", "PROPN")


def _says_a_place(token: Any, lexicon: Lexicon) -> bool:
    """Whether the token's phrase starts with a place word and names a thing ("on top of the
    fridge", "next to the stove")."""
    words = [t.lower_ for t in token.subtree]
    starts = lexicon.located.match(words, 0) is not None or lexicon.near.match(words, 0) is not None
    return starts and token.dep_ in ("prep", "advmod", "npadvmod") and \
        any(t.pos_ in ("NOUN", "PROPN") for t in token.subtree)


def _only_frames_a_place(token: Any) -> bool:
    """A word of a relative clause that says nothing but how the place is said: the relative
    pronoun, an auxiliary ("is", "was", "'s", "been"), "still", or who left the thing there."""
    if list(token.children):
        return False
    if token.dep_ in ("aux", "auxpass"):
        return True
    if token.lower_ in _RELATIVE_PRONOUNS and token.dep_ in ("nsubj", "nsubjpass", "dobj", "pobj", "advmod", "mark"):
        return True
    if token.dep_ == "advmod" and token.lower_ in _STILL:
        return True
    return token.dep_ == "nsubj" and token.pos_ == "PRON"


_FRAME_WORDS = {"sure", "certain", "please", "that", "kindly", "really", "just"}


def _said_all(sentence: Any, thing: Any, state: Any) -> bool:
    """Whether the thing's phrase and its state are all the sentence asks: every other word is of
    the wish's frame ("I would like ...", "make sure that ..."), so none is dropped in the command
    ("I'd like the milk heated in the microwave" says where: it is not rewritten)."""
    used = {t.i for t in thing.subtree} | {state.i} | {c.i for c in state.children if c.dep_ in ("aux", "auxpass", "prt")}
    for t in sentence:
        if t.i in used or t.pos_ in ("AUX", "PRON", "PART", "SCONJ", "INTJ", "PUNCT") or t.lower_ in _FRAME_WORDS:
            continue
        if t.dep_ == "ROOT" or (t.lemma_.lower() in _WISHES and t.pos_ == "VERB"):
            continue
        return False
    return not any(t.dep_ == "neg" for t in sentence)


def _request_verb(token: Any, lexicon: Lexicon) -> str | None:
    """The lexicon's verb this token says (its lemma, with its particle: "turn ... off"), or None."""
    if token.pos_ not in ("VERB", "AUX") and token.tag_[:2] != "VB":
        return None
    return _said_verb(token, lexicon.verbs)


def _said_verb(token: Any, verbs: Any) -> str | None:
    """The verb of `verbs` (a PhraseSet or a dict keyed by word tuples) that the token's lemma says,
    with its particle where the token has one ("switched ... off": switch off), else alone; or None."""
    lemma = token.lemma_.lower()
    particles = tuple(c.text.lower() for c in token.children if c.dep_ == "prt")
    return next((" ".join(p) for p in ((lemma, *particles), (lemma,)) if p in verbs), None)


def _verb_under(root: Any, lexicon: Lexicon) -> Any | None:
    """The first request verb under the root's frame ("be so kind as to PUT", "mind CLOSING"), not
    one under another request verb ("... put the apple in the fridge and CLOSE it" is said whole)."""
    found = [t for t in root.subtree if t.dep_ in _UNDER and _request_verb(t, lexicon)
             and not any(_request_verb(a, lexicon) for a in t.ancestors if a.i != root.i)
             and all(c.text.lower() in _ADDRESSEE for c in t.children if c.dep_ in ("nsubj", "nsubjpass"))]
    return min(found, key=lambda t: t.i) if found else None


def _as_command(token: Any, lexicon: Lexicon) -> str:
    """A request verb as said in a command ("closing" -> "close"); any other word as it is."""
    if token.tag_ in ("VBG", "VBD", "VBN", "VBZ", "VBP") and token.dep_ in (*_UNDER, "ROOT") \
            and _request_verb(token, lexicon) is not None:
        return token.lemma_.lower()
    return token.text


def _wished_state(sentence: Any, root: Any, lexicon: Lexicon) -> str | None:
    """"I need the bread sliced", "make sure the fridge is closed": the state verb of the wished-for
    state and its thing; "I want the lamp on": switching it."""
    for token in root.subtree:
        if token.i == root.i:
            continue
        verb = _state_verb_for(token, lexicon)
        if verb is None or token.dep_ not in ("ccomp", "xcomp", "oprd", "acomp", "conj"):
            continue
        things = [c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")] or \
                 [c for c in root.children if c.dep_ == "dobj"]
        if things and _said_all(sentence, things[0], token):
            return f"{verb} {_phrase(things[0], stop=token)}"
    for switch in root.subtree:  # "I want the lamp on", "make sure the lamp is on"
        if switch.text.lower() not in ("on", "off") or list(switch.children) or \
                switch.dep_ not in ("prep", "prt", "advmod", "acomp"):
            continue
        head = switch.head
        things = [c for c in head.children if c.dep_ in ("dobj", "nsubj", "nsubjpass") and c.pos_ in ("NOUN", "PROPN")]
        if head.pos_ in ("NOUN", "PROPN"):  # "the lamp on" parsed as one phrase
            things = [head]
        elif head.i == root.i:
            things = [c for c in root.children if c.dep_ == "dobj"] or things
        if things and _said_all(sentence, things[0], switch):
            return f"turn {switch.text.lower()} {_phrase(things[0], stop=switch)}"
    return None


def _state_verb_for(token: Any, lexicon: Lexicon) -> str | None:
    """The state verb that makes the state a word names ("sliced" -> slice, "closed" -> close,
    "switched off" -> switch off)."""
    word = token.text.lower()
    if token.tag_ in ("VBN", "VBD", "JJ") and (verb := _said_verb(token, lexicon.state_verbs)) is not None:
        return verb
    state = lexicon.state_adjectives.get(word)
    if state is None:
        return None
    return next((" ".join(v) for v, s in lexicon.state_verbs.items() if s == state and len(v) == 1), None)


def _phrase(head: Any, stop: Any) -> str:
    """The words of a noun phrase, without the wished-for state that may hang under it or above it."""
    own = {t.i for t in head.subtree}
    skip = {t.i for t in stop.subtree if t.i not in own} | {stop.i}
    return " ".join(t.text for t in head.subtree if t.i not in skip)


@lru_cache(maxsize=1)
def fetched_parser() -> Parse | None:
    """spaCy's small English pipeline from the models directory (loaded once per process), or None
    where spaCy is not installed or the pipeline is not fetched."""
    from conceptagent_ros.models.store import is_fetched, lookup, model_file

    model = lookup("en-core-web-sm")
    if not is_fetched(model):
        return None
    try:
        import spacy
    except ImportError:
        return None
    try:
        return spacy.load(model_file(model), exclude=["ner"])
    except (OSError, ValueError) as e:  # a pipeline for another spaCy version
        log.warning("cannot load %s with spaCy %s: %s", model_file(model), spacy.__version__, e)
        return None

