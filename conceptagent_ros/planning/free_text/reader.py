"""Reading one clause of an instruction into a request: its verb, the things it names (noun phrases
with what picks them out) and where they go. Every word must be read; a clause with a word left
over is refused, naming it."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from conceptagent_ros.errors import InstructionError
from conceptagent_ros.planning.free_text.known import KnownScene, Nouns
from conceptagent_ros.planning.free_text.lexicon import Lexicon, Words
from conceptagent_ros.planning.free_text.similar_names import SimilarNames

RECIPIENTS = ("me", "us")  # "bring me the remote": whom a thing is brought to, the robot keeping it


@dataclass
class NounPhrase:
    """A reference to a thing (or things): what it is, and what the instruction says to pick it out."""

    text: str
    kind: str  # "thing" | "id" | "room" | "pronoun" | "there"
    head: str  # a category, an object or room id, a room category, or the pronoun
    definite: bool = True
    adjectives: list[str] = field(default_factory=list)  # attribute values: colour, size
    states: list[tuple[str, bool]] = field(default_factory=list)  # "the dirty mug"
    rooms: list[str] = field(default_factory=list)  # "the bathroom sink", "the shelf in the living room"
    inside: list[NounPhrase] = field(default_factory=list)  # "the apple in the bowl", "the cup from the table"
    near: NounPhrase | None = None  # "the counter next to the sink"
    beside: bool = False  # a destination said as "next to" this thing: where it stands ("put the salt next to the pepper")
    # named by a word taken for the scene's nearest name ("the bookshelf": a shelf); where several
    # fit, it is not any of them, as "the shelf" would be where a thing goes: it is asked which
    guessed: bool = False


@dataclass
class Request:
    """One request of a clause. kind: "state" (predicate made `value` for the objects, and where
    `place` is given, done there and left there), "place" (objects put in/on `place`), "pick" (held,
    or a step on the way), "find" (a step on the way)."""

    kind: str
    objects: list[NounPhrase]
    place: NounPhrase | None = None
    predicate: str = ""
    value: bool = True
    text: str = ""


class ClauseReader:
    """Reads the words of one clause; `position` moves over them as they are understood."""

    def __init__(self, words: list[str], lexicon: Lexicon, scene: KnownScene, nouns: Nouns,
                 similar: SimilarNames | None = None):
        self.words = words
        self.lexicon = lexicon
        self.scene = scene
        self.nouns = nouns
        self.similar = similar  # guesses what unknown words name; None: they are refused
        self.guesses: list[tuple[str, str, float]] = []  # (words said, name taken, similarity)
        self.position = 0
        self.text = " ".join(words)

    # -- words -------------------------------------------------------------------------------------
    def at_end(self) -> bool:
        return self.position >= len(self.words)

    def peek(self, offset: int = 0) -> str | None:
        i = self.position + offset
        return self.words[i] if i < len(self.words) else None

    def take(self, phrases) -> Words | None:  # noqa: ANN001 - a PhraseSet
        found = phrases.match(self.words, self.position)
        if found is not None:
            self.position += len(found)
        return found

    def take_word(self, options: frozenset[str] | set[str]) -> str | None:
        word = self.peek()
        if word is not None and word in options:
            self.position += 1
            return word
        return None

    def refuse_rest(self) -> None:
        if not self.at_end():
            rest = " ".join(self.words[self.position:])
            raise InstructionError(f"I do not understand '{rest}' in '{self.text}'; say it another way, or pass a "
                                   "PDDL goal with --goal")

    def starts_verb(self, i: int) -> bool:
        return self.lexicon.verbs.match(self.words, i) is not None

    # -- noun phrases ------------------------------------------------------------------------------
    def noun_phrases(self, bare_relations: bool) -> list[NounPhrase]:
        """One noun phrase, or several joined by "and" / commas ("the lettuce and the tomato")."""
        phrases = [self.noun_phrase(bare_relations)]
        while self.peek() in ("and", ",") and not self.starts_verb(self.position + 1):
            self.position += 1
            phrases.append(self.noun_phrase(bare_relations))
        return phrases

    def noun_phrase(self, bare_relations: bool) -> NounPhrase:
        """A reference: [determiner] [adjectives, room words] noun [where it is]. With
        `bare_relations`, "in the bowl" after the noun says where the thing is; without, it ends the
        phrase (after a place verb it is where the thing goes) unless led in by "that is"."""
        start = self.position
        word = self.peek()
        if word is None:
            raise InstructionError(f"'{self.text}' ends where a thing should be named")
        if word in self.lexicon.pronouns and not self._noun_follows(self.position + 1):
            self.position += 1
            return NounPhrase(word, "pronoun", word)
        if word in self.lexicon.there:
            self.position += 1
            return NounPhrase(word, "there", word)
        determiner = self.take_word(self.lexicon.determiners)
        named = self.position  # where the words that say what it is start (for messages)
        phrase = NounPhrase("", "thing", "", definite=determiner is None or determiner in self.lexicon.definite)
        attribute_words = self.scene.attribute_values() | self.lexicon.colours
        while not self.at_end():
            word = self.peek()
            assert word is not None
            if word in self.scene.objects or word in self.scene.rooms:
                self.position += 1
                phrase.kind, phrase.head = ("room" if word in self.scene.rooms else "id"), word
                break
            thing = self.nouns.things_set.match(self.words, self.position)
            named_id = self.nouns.id_words_set.match(self.words, self.position)
            if named_id is not None and (thing is None or len(named_id) > len(thing)):  # "countertop 2"
                self.position += len(named_id)
                phrase.kind, phrase.head = "id", self.nouns.id_words[named_id]
                break
            room = self.nouns.rooms_set.match(self.words, self.position)
            if room is not None and (thing is None or len(room) >= len(thing)):
                self.position += len(room)
                if self._noun_follows(self.position):  # "the bathroom sink": a room word before the noun
                    phrase.rooms.append(self.nouns.rooms[room])
                    continue
                phrase.kind, phrase.head = "room", self.nouns.rooms[room]
                break
            if thing is not None:
                self.position += len(thing)
                phrase.head = self.nouns.things[thing]
                break
            if word in self.lexicon.quantities or word.isdigit():
                raise InstructionError(f"'{word}' in '{' '.join(self.words[start:])}': a goal names things one by "
                                       "one, so a number of them cannot be asked for; name each thing")
            if word in self.lexicon.state_adjectives:
                phrase.states.append(self.lexicon.state_adjectives[word])
            elif word in attribute_words:
                phrase.adjectives.append(word)
            elif self.lexicon.attribute_synonyms.get(word) in attribute_words:  # "big": large
                phrase.adjectives.append(self.lexicon.attribute_synonyms[word])
            elif self._guess_name(phrase):  # "the rubbish bin": a name near one of the scene's
                break
            else:
                self._unknown_thing(named)
            self.position += 1
        if not phrase.head:
            self._unknown_thing(named)
        if phrase.kind != "room":
            self._where(phrase, bare_relations)
        phrase.text = " ".join(self.words[start:self.position])
        return phrase

    def _beside(self, thing: NounPhrase) -> NounPhrase:
        """"put the salt next to the pepper", where nothing else says where it goes: the "next to" is
        where it goes, not which salt; the place is where the pepper stands (binding.py)."""
        anchor = thing.near
        assert anchor is not None
        said = thing.text.split()
        cut = len(said) - len(anchor.text.split())  # the anchor's words end the thing's
        lead = next((len(p) for p in self.lexicon.near.phrases if tuple(said[cut - len(p):cut]) == p), 0)
        thing.near, thing.text = None, " ".join(said[:cut - lead])
        return replace(anchor, beside=True, text=" ".join(said[cut - lead:]))

    def _noun_follows(self, i: int) -> bool:
        return i < len(self.words) and (self.nouns.things_set.match(self.words, i) is not None
                                        or self.nouns.rooms_set.match(self.words, i) is not None
                                        or self.words[i] in self.scene.objects)

    def _where(self, phrase: NounPhrase, bare_relations: bool) -> None:
        """What follows the noun and says where the thing is."""
        while not self.at_end():
            mark = self.position
            led_in = self.take(self.lexicon.relative) is not None
            if self.take(self.lexicon.near) is not None:
                phrase.near = self.noun_phrase(bare_relations)
                continue
            if self.take(self.lexicon.source) is not None or (
                    (led_in or bare_relations) and self.take(self.lexicon.located) is not None):
                anchor = self.noun_phrase(bare_relations)
                if anchor.kind == "room":
                    phrase.rooms.append(anchor.head)
                else:
                    phrase.inside.append(anchor)
                continue
            self.position = mark
            return

    def _name_end(self, start: int) -> int:
        """Where a name that starts at `start` ends: at the first word that is never part of one
        (a determiner, a preposition, a particle, "and"); `start` itself where it is such a word."""
        stops = self.lexicon.function_words
        return next((i for i in range(start, len(self.words)) if self.words[i] in stops), len(self.words))

    def _guess_name(self, phrase: NounPhrase) -> bool:
        """Take the unknown words from here to the name's end for the scene's name nearest in meaning
        (planning/free_text/similar_names.py), where one is near enough; False otherwise."""
        if self.similar is None:
            return False
        end = self._name_end(self.position)
        if end == self.position:
            return False
        said = " ".join(self.words[self.position:end])
        match = self.similar.guess(said, self.nouns.names())
        if match is None:
            return False
        self.position = end
        phrase.kind, phrase.head, phrase.guessed = match.name.kind, match.name.target, True
        self.guesses.append((said, match.name.said, match.score))
        return True

    def _unknown_thing(self, start: int) -> None:
        words = self.words[start:]
        stop = next((i for i, w in enumerate(words) if i and (w in ("and", ",") or self.lexicon.into.match(words, i))),
                    len(words))
        said = " ".join(words[:stop])
        known = sorted(c.replace("_", " ") for c in self.scene.categories if c != "room")
        # "paper" for toilet paper: a word that is only part of a thing's name is not taken for it
        head = words[stop - 1] if stop else ""
        partly = [k for k in known if head in k.split() and k != head]
        if partly:
            raise InstructionError(f"I do not know what '{said}' is: '{head}' is only part of the name of "
                                   f"{' / '.join(partly)}; say it in full")
        nearest = self.similar.ranked(said, self.nouns.names())[:3] if self.similar is not None else []
        if nearest:
            raise InstructionError(f"I do not know what '{said}' is; the nearest in meaning of what I know: "
                                   + ", ".join(f"{m.name.said} ({m.score:.2f})" for m in nearest)
                                   + "; say which, or call it another way")
        raise InstructionError(f"I do not know what '{said}' is; known things include: {', '.join(known[:30])}"
                               + (", ..." if len(known) > 30 else ""))

    # -- clauses -----------------------------------------------------------------------------------
    def _light_verb(self) -> None:
        """"give the mug a wash", "give the plant some water": a light verb, the thing, and a noun
        that is a state verb of one word are read as that verb said of the thing ("wash the mug")."""
        lex = self.lexicon
        rest = self.words[self.position:]
        if (len(rest) >= 4 and (rest[0],) in lex.light_verbs.phrases and rest[-2] in lex.indefinite
                and (rest[-1],) in lex.state_verbs):
            self.words = self.words[:self.position] + [rest[-1], *rest[1:-2]]

    def request(self, under_heading: bool) -> Request:
        """The clause as one request; InstructionError naming what was not understood."""
        lex = self.lexicon
        self._light_verb()
        if (verb := self._state_verb()) is not None:
            predicate, value = lex.state_verbs[verb]
            particles = lex.state_verb_particles.get(verb)
            # heating and chilling happen in a place the thing is left in; elsewhere "on the
            # counter" after the thing says which thing it is
            keeps_place = predicate in ("heated", "cold")
            if particles is not None:  # "heat up the potato"
                self.take(particles)
            objects = self.noun_phrases(bare_relations=not keeps_place)
            if any(o.kind == "room" for o in objects):  # "clean up the bathroom" heads the steps that say what
                raise InstructionError(f"'{self.text}': a room is not something to {' '.join(verb)}; "
                                       "say which things in it")
            if particles is not None:  # "heat the potato up"
                self.take(particles)
            place = None
            if keeps_place and self.take(lex.into) is not None:
                place = self.noun_phrase(bare_relations=True)
            self.refuse_rest()
            return Request("state", objects, place, predicate, value, self.text)
        if self.take(lex.discard_verbs) is not None:
            objects = self.noun_phrases(bare_relations=False)
            self.refuse_rest()
            return self._discarding(objects)
        verb = self.take(lex.place_verbs) or self.take(lex.pick_verbs) or self.take(lex.find_verbs)
        if verb is not None:
            return self._moving(verb)
        # "it goes in the trash"; under a heading, "a plate and a fork on the table"
        belongs = any(lex.belongs_verbs.match(self.words, i) for i in range(self.position, len(self.words)))
        if not belongs and not under_heading:
            raise InstructionError(f"I do not understand '{self.text}': '{self.peek()}' is nothing I know how to do. "
                                   "Try e.g. 'put the apple in the fridge', 'slice the bread', 'turn on the lamp', "
                                   "or pass a PDDL goal with --goal")
        objects = self.noun_phrases(bare_relations=False)
        self.take(lex.belongs_verbs)
        if self.take(lex.into) is None:
            self.refuse_rest()
            raise InstructionError(f"'{self.text}': where should it go?")
        place = self.noun_phrase(bare_relations=True)
        self.refuse_rest()
        return Request("place", objects, place, text=self.text)

    def _state_verb(self) -> Words | None:
        lex = self.lexicon
        if self.peek() in ("turn", "switch", "power") and self.peek(1) not in ("on", "off"):
            # "turn the lamp on": the particle comes after the thing
            last = self.words[-1] if self.words else ""
            if last in ("on", "off"):
                particle: Words = (self.words[self.position], last)
                self.words = self.words[:-1]
                self.position += 1
                return particle if particle in lex.state_verbs else None
        return self.take(lex.state_verb_set)

    def _discarding(self, objects: list[NounPhrase]) -> Request:
        where = self.lexicon.discard_to
        return Request("place", objects, NounPhrase(where, "thing", where, definite=False), text=self.text)

    def _moving(self, verb: Words) -> Request:
        lex = self.lexicon
        for_someone = self.peek() in RECIPIENTS and self.peek(1) is not None
        if for_someone:  # "fetch me the remote": who it is for
            self.position += 1
        # "pick up the apple in the bowl": where it is; "put the apple in the bowl": where it goes
        objects = self.noun_phrases(bare_relations=verb not in lex.place_verbs)
        rest = tuple(self.words[self.position:])
        if rest and (*verb, *rest) in lex.discard_verbs.phrases:  # "throw the newspaper away", "... out"
            self.position = len(self.words)
            return self._discarding(objects)
        self.take(lex.place_particles)
        if self.peek() == "to" and self.peek(1) in RECIPIENTS and self.position + 2 == len(self.words):
            self.position += 2  # "bring the remote to me"
            for_someone = True
        if self.peek() in lex.there:
            self.position += 1
            place: NounPhrase | None = NounPhrase("there", "there", "there")
        elif verb in lex.place_verbs and self.take(lex.into) is not None:
            place = self.noun_phrase(bare_relations=True)
        elif verb in lex.place_verbs and self.at_end() and objects[-1].near is not None and objects[-1].near.kind != "room":
            place = self._beside(objects[-1])
        else:
            place = None
        self.refuse_rest()
        if place is not None:
            return Request("place", objects, place, text=self.text)
        if verb in lex.find_verbs:
            return Request("find", objects, text=self.text)
        if verb in lex.pick_verbs or for_someone:  # "bring me the remote": into the robot's hand
            return Request("pick", objects, text=self.text)
        raise InstructionError(f"'{self.text}': where should {objects[-1].text} go? Say e.g. "
                               f"'{' '.join(verb)} {objects[-1].text} on the table'")
