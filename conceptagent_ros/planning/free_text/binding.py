"""Noun phrases to goal terms: an object id where what the instruction says picks out one known
object, a typed variable where it asks for any one of a kind, a refusal where it fits several and
says "the", or fits none.

Where things go is read differently: "put it on the counter", "leave it in the sink" use "the" as a
weak definite (Carlson & Sussman, 2005), a kind of place rather than one the listener must
identify, so a destination that fits several known places means any of them (all of its kind: the
kind's variable; some: those, as a disjunction) and is not refused."""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import NoReturn

from conceptagent_ros.errors import InstructionError
from conceptagent_ros.planning.free_text.known import KnownObject, KnownScene
from conceptagent_ros.planning.free_text.lexicon import plural
from conceptagent_ros.planning.free_text.reader import NounPhrase

NEAR_TIE_M = 0.05  # two things this close to equally near: "next to" does not tell them apart


def _spoken(category: str) -> str:
    return category.replace("_", " ")


def _many(category: str) -> str:
    words = _spoken(category).split()
    return " ".join([*words[:-1], plural(words[-1])])


def _described(o: KnownObject) -> str:
    where = [f"in {o.room}" if o.room else "", f"on/in {o.parent}" if o.parent else "",
             ", ".join(o.attributes.values())]
    text = ", ".join(w for w in where if w)
    return f"{o.id} ({text})" if text else o.id


class Binder:
    """Binds the noun phrases of one instruction, in order: "it" is the thing named last (other than
    the one being put), "them" the things named together last, "there" the place named last."""

    def __init__(self, scene: KnownScene):
        self.scene = scene
        self.variables: dict[str, str] = {}  # category -> variable: "a cup ... a cup" is one cup
        self.named: list[str] = []
        self.acted_on: list[str] = []  # the things requests acted on, in order (not the places)
        self.group: list[str] = []
        self.place: str | tuple[str, ...] | None = None  # several: any of them (a weak definite)
        self.room_hint: list[str] = []  # a heading's room ("clean up the bathroom: ...")

    # -- terms -------------------------------------------------------------------------------------
    def terms(self, phrases: list[NounPhrase], other_than: Iterable[str] = (), needs: str | None = None) -> list[str]:
        """`needs`: the affordance the request needs of its things (`openable` to close one), which
        tells what "it" refers to."""
        terms: list[str] = []
        for phrase in phrases:
            if phrase.kind == "pronoun" and phrase.head == "them" and self.group:
                terms.extend(self.group)
            else:
                terms.append(self.term(phrase, other_than, needs))
        self.group = list(terms)
        return terms

    def term(self, phrase: NounPhrase, other_than: Iterable[str] = (), needs: str | None = None) -> str:
        exclude = set(other_than)
        if phrase.kind == "pronoun":
            # the thing last acted on ("bake the potato in the oven and leave it there"), else the
            # thing last named ("open the fridge and put the apple in it"); of those, one that can
            # be what is asked ("put the apple in the fridge and close it": the fridge)
            def fits(t: str) -> bool:
                return t not in exclude and (needs is None or self.scene.may_have(t, needs, self.variables))

            earlier = ([t for t in self.acted_on if fits(t)] or [t for t in self.named if fits(t)]
                       or [t for t in self.acted_on if t not in exclude] or [t for t in self.named if t not in exclude])
            if not earlier:
                raise InstructionError(f"'{phrase.text}' refers to nothing named before it")
            return earlier[-1]
        if phrase.kind == "there":
            if self.place is None:
                raise InstructionError("'there' refers to no place named before it")
            if isinstance(self.place, tuple):
                raise InstructionError(f"'there' could be any of {', '.join(self.place)}; say which place")
            return self.place
        if phrase.kind in ("id", "room"):
            term = self._room(phrase) if phrase.kind == "room" else phrase.head
        else:
            term = self._thing(self._sole_alike(phrase))
        self.named.append(term)
        return term

    def remember_place(self, term: str | tuple[str, ...]) -> None:
        self.place = term

    def destination(self, phrase: NounPhrase, other_than: Iterable[str] = ()) -> str | tuple[str, ...]:
        """Where things go: one term, or the ids of the several known places that fit what the
        instruction says of it (a weak definite: any of them will do; not for a guessed name)."""
        if phrase.beside:
            return self._where_it_stands(phrase, other_than)
        if phrase.kind != "thing" or not phrase.definite or phrase.guessed:
            return self.term(phrase, other_than)
        phrase = self._sole_alike(phrase)
        chosen, constrained = self.candidates(phrase, ties=True)
        kind = self.scene.of_category(phrase.head)
        if not constrained:
            if len(kind) <= 1:
                return self.term(phrase, other_than)
            rooms = set().union(*(self._rooms_named(r) for r in self.room_hint))
            chosen = [o for o in kind if o.room in rooms] or kind
        if not chosen:
            self._refuse(phrase, chosen)
        term: str | tuple[str, ...]
        if len(chosen) == 1:
            term = chosen[0].id
        elif {o.id for o in chosen} == {o.id for o in kind}:
            term = self.variable(phrase.head)
        else:
            return tuple(o.id for o in chosen)
        self.named.append(term)
        return term

    def _where_it_stands(self, phrase: NounPhrase, other_than: Iterable[str]) -> str:
        """"next to the pepper" as a destination: what the pepper is on or in, the one place the goal
        can say (there is no "next to" among the predicates); refused where that is not known."""
        said = replace(phrase, beside=False)
        if said.kind == "thing":  # one thing, not any of a kind: where "a pepper" stands says no place
            chosen = self.candidates(self._sole_alike(said))[0]
            if len(chosen) != 1:
                raise InstructionError(f"'{phrase.text}': next to which {_spoken(phrase.head)}? Say which")
            anchor = chosen[0].id
            self.named.append(anchor)
        else:
            anchor = self.term(said, other_than)
        known = self.scene.objects.get(anchor)
        if known is None or known.parent is None or known.parent in self.scene.rooms:
            raise InstructionError(f"'{phrase.text}': {anchor} is on or in nothing I know of, so that says no "
                                   "place to put it; say where it should go, e.g. 'on the table'")
        if known.parent in set(other_than):  # "put the bowl next to the apple" with the apple in the bowl
            raise InstructionError(f"'{phrase.text}': {anchor} is in {known.parent}, the thing to move; say "
                                   "where it should go")
        return known.parent

    def variable(self, category: str) -> str:
        """The instruction's one variable of a kind: "a cup ... a cup" is one cup."""
        if category not in self.variables:
            self.variables[category] = f"?{category[:1]}{len(self.variables)}"
        return self.variables[category]

    def _room(self, phrase: NounPhrase) -> str:
        rooms = sorted(self._rooms_named(phrase.head))
        if len(rooms) != 1:
            raise InstructionError(f"'{phrase.text}' could be {', '.join(rooms) or 'no room of this map'}; say which")
        return rooms[0]

    def _thing(self, phrase: NounPhrase) -> str:
        category = phrase.head
        chosen, constrained = self.candidates(phrase)
        if constrained:
            if len(chosen) == 1:
                return chosen[0].id
            self._refuse(phrase, chosen)
        kind = self.scene.of_category(category)
        if not kind and self._every_kind_known():
            self._none_here(phrase)
        if phrase.definite and len(kind) > 1 and self.room_hint:
            rooms = set().union(*(self._rooms_named(r) for r in self.room_hint))
            in_room = [o for o in kind if o.room in rooms]
            if len(in_room) == 1:
                return in_room[0].id
        if phrase.definite and len(kind) > 1:
            raise InstructionError(f"'{phrase.text}' could be any of {len(kind)} {_many(category)} "
                                   f"({'; '.join(_described(o) for o in kind)}); say which, e.g. by its room or "
                                   "what it is on")
        return self.variable(category)

    def _every_kind_known(self) -> bool:
        return bool(self.scene.complete and self.scene.objects
                    and all(o.category for o in self.scene.objects.values()))

    def _alike(self, category: str) -> list[str]:
        """The kinds here whose names end as this one's does ("dining table" for "table")."""
        head = _spoken(category)
        present = sorted({o.category for o in self.scene.objects.values()})
        return [c for c in present if c != category and _spoken(c).endswith(" " + head)]

    def _sole_alike(self, phrase: NounPhrase) -> NounPhrase:
        """A kind the scene has none of, said of the one kind here whose name ends as it does, is
        that kind: "the table" in a kitchen whose one table is a dining table. Where several fit
        (a coffee table and a dining table) the phrase is left as said, to be refused asking which."""
        if phrase.kind != "thing" or self.scene.of_category(phrase.head) or not self._every_kind_known():
            return phrase
        alike = self._alike(phrase.head)
        return replace(phrase, head=alike[0]) if len(alike) == 1 else phrase

    def _none_here(self, phrase: NounPhrase) -> NoReturn:
        """A kind the scene has none of ("the table" in a room with a coffee table and a dining
        table): refused, with the kinds whose names end as this one does, which may be what was meant."""
        alike = [_spoken(c) for c in self._alike(phrase.head)]
        raise InstructionError(f"there is no {_spoken(phrase.head)} here" + (
            f"; did you mean the {' or the '.join(alike)}?" if alike else ""))

    def _refuse(self, phrase: NounPhrase, chosen: list[KnownObject]) -> NoReturn:
        kind = self.scene.of_category(phrase.head)
        known = "; ".join(_described(o) for o in kind) or "none"
        if chosen:
            raise InstructionError(f"'{phrase.text}' fits {len(chosen)} objects "
                                   f"({', '.join(o.id for o in chosen)}); say which")
        if phrase.adjectives and not phrase.rooms and not phrase.inside and not phrase.near and not phrase.states:
            raise InstructionError(f"no {' '.join(phrase.adjectives)} {_spoken(phrase.head)} here; "
                                   f"the {_many(phrase.head)} known: "
                                   + ", ".join(f"{o.id} ({', '.join(o.attributes.values()) or 'no attributes'})"
                                               for o in kind))
        seen = "" if self.scene.complete else " (of what the robot has seen so far)"
        raise InstructionError(f"no {_spoken(phrase.head)} fits '{phrase.text}'{seen}; the "
                               f"{_many(phrase.head)} known: {known}")

    # -- candidates --------------------------------------------------------------------------------
    def candidates(self, phrase: NounPhrase, ties: bool = False) -> tuple[list[KnownObject], bool]:
        """The known objects the phrase can mean, and whether anything beyond its kind narrowed them.
        `ties`: things equally near what "next to" names are all candidates, not a refusal."""
        if phrase.kind == "id":
            o = self.scene.objects.get(phrase.head)
            return ([o] if o else []), True
        if phrase.kind == "room":
            return [KnownObject(r, "room", room=r) for r in self._rooms_named(phrase.head)], True
        kind = self.scene.of_category(phrase.head)
        chosen = list(kind)
        constrained = False
        if phrase.adjectives:
            constrained = True
            colours_known = self.scene.has_colours()
            values = self.scene.attribute_values()
            unknowable = [a for a in phrase.adjectives if a not in values and not colours_known]
            if unknowable:
                raise InstructionError(f"'{' '.join(unknowable)}' in '{phrase.text}': nothing here is known by "
                                       "such a word; leave it out or say which by where it is")
            chosen = [o for o in chosen if set(phrase.adjectives) <= set(o.attributes.values())]
        for key, value in phrase.states:
            constrained = True
            chosen = [o for o in chosen if bool(o.state.get(key, False)) == value]
        for room in phrase.rooms:
            constrained = True
            rooms = self._rooms_named(room)
            chosen = [o for o in chosen if o.room in rooms]
        for anchor in phrase.inside:
            constrained = True
            holders = {a.id for a in self.candidates(anchor)[0]}
            chosen = [o for o in chosen if o.parent in holders or (o.room in holders and anchor.kind == "room")]
        if phrase.near is not None:
            constrained = True
            chosen = self._nearest(phrase, chosen, ties)
        return chosen, constrained

    def _rooms_named(self, name: str) -> set[str]:
        return {r for r, c in self.scene.rooms.items() if name in (r, c)}

    def _nearest(self, phrase: NounPhrase, chosen: list[KnownObject], ties: bool = False) -> list[KnownObject]:
        assert phrase.near is not None
        anchors = [a for a in self.candidates(phrase.near)[0] if a.position is not None]
        if len(anchors) != 1:
            raise InstructionError(f"'{phrase.near.text}' in '{phrase.text}' does not name one known thing")
        where = anchors[0].position
        assert where is not None
        placed = sorted((math.dist(o.position[:2], where[:2]), o.id, o)
                        for o in chosen if o.position is not None and o.id != anchors[0].id)
        if not placed:
            return []
        if len(placed) > 1 and placed[1][0] - placed[0][0] < NEAR_TIE_M:
            tied = [o for d, _, o in placed if d - placed[0][0] < NEAR_TIE_M]
            if ties:
                return tied
            raise InstructionError(f"'{phrase.text}': {', '.join(o.id for o in tied)} are equally near "
                                   f"{anchors[0].id}; say which")
        return [placed[0][2]]
