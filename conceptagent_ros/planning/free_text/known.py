"""What the translator may know of the scene when it reads an instruction: the categories perception
names, the rooms of the map, and the objects the robot knows with where they are."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from conceptagent_ros.planning.free_text.lexicon import Lexicon, PhraseSet, Words, plural, words_of
from conceptagent_ros.planning.free_text.similar_names import Name
from conceptagent_ros.scene.model import SceneObject


@dataclass(frozen=True)
class KnownObject:
    id: str
    category: str
    room: str | None = None
    parent: str | None = None  # the receptacle it is in or on
    position: tuple[float, float, float] | None = None
    state: Mapping[str, bool] = field(default_factory=dict)
    attributes: Mapping[str, str] = field(default_factory=dict)
    affordances: frozenset[str] = frozenset()  # empty where they are not known


@dataclass(frozen=True)
class KnownScene:
    categories: frozenset[str]
    objects: Mapping[str, KnownObject]
    rooms: Mapping[str, str]  # room id -> room category ("bathroom_1" -> "bathroom")
    # Every object of the scene is known (the embedded world); else one not seen yet may exist, and a
    # reference that fits nothing known is "not seen yet" rather than "not here".
    complete: bool = True

    @classmethod
    def build(cls, categories: Iterable[str], objects: Mapping[str, str] | Iterable[str] = (),
              attributes: Mapping[str, Mapping[str, str]] | None = None,
              places: Mapping[str, KnownObject] | None = None, rooms: Mapping[str, str] | None = None,
              complete: bool = True) -> KnownScene:
        """From the loose arguments of interpret_instruction: ids (with their categories where given),
        their attributes, and what is known of where they are."""
        types = dict(objects) if isinstance(objects, Mapping) else {o: "" for o in objects}
        rooms = dict(rooms or {})
        rooms.update({o: "room" for o, t in types.items() if t == "room" and o not in rooms})
        known: dict[str, KnownObject] = {}
        for oid, category in types.items():
            if oid in rooms:
                continue
            place = (places or {}).get(oid)
            if place is not None:
                known[oid] = place
            else:
                known[oid] = KnownObject(oid, category, attributes=dict((attributes or {}).get(oid, {})))
        return cls(frozenset(categories), known, rooms, complete)

    def may_have(self, term: str, affordance: str, variables: Mapping[str, str]) -> bool:
        """Whether the thing a goal term names (an id, or the variable of a category) can have the
        affordance; True where nothing is known of affordances."""
        if not any(o.affordances for o in self.objects.values()):
            return True
        categories = [c for c, v in variables.items() if v == term]
        things = self.of_category(categories[0]) if categories else [self.objects[term]] if term in self.objects else []
        return any(affordance in o.affordances for o in things)

    def of_category(self, category: str) -> list[KnownObject]:
        return sorted((o for o in self.objects.values() if o.category == category), key=lambda o: o.id)

    def attribute_values(self) -> set[str]:
        return {v for o in self.objects.values() for v in o.attributes.values()}

    def has_colours(self) -> bool:
        return any("colour" in o.attributes or "color" in o.attributes for o in self.objects.values())


@dataclass(frozen=True)
class Nouns:
    """The nouns of one scene: categories (and their plurals), the lexicon's synonyms for them, rooms
    (by category and id), and object ids."""

    things: dict[Words, str]  # words -> category
    rooms: dict[Words, str]  # words -> room category or room id
    things_set: PhraseSet
    rooms_set: PhraseSet
    ids: frozenset[str] = frozenset()  # object ids and attribute values: words that may start a thing's name
    # an object's id said as words where they are more than its category's: "countertop 2" and
    # "countertop two" for countertop_2, "conference table" for conference_table (a table)
    id_words: dict[Words, str] = field(default_factory=dict)
    id_words_set: PhraseSet = field(default_factory=lambda: PhraseSet(()))
    named_ids: frozenset[str] = frozenset()  # ids with words of their own: "conference table", "room keys"

    @classmethod
    def of(cls, scene: KnownScene, lexicon: Lexicon) -> Nouns:
        things: dict[Words, str] = {}
        for category in scene.categories:
            if category == "room" or category in set(scene.rooms.values()):
                continue
            words = words_of(category)
            things[words] = category
            things.setdefault((*words[:-1], plural(words[-1])), category)
        for words, category in lexicon.synonyms.items():
            if category in scene.categories:
                things.setdefault(words, category)
        rooms: dict[Words, str] = {}
        for rid, category in scene.rooms.items():
            rooms[(rid,)] = rid
            if category != "room":
                rooms[words_of(category)] = category
        for words, category in lexicon.room_synonyms.items():
            if category in scene.rooms.values():
                rooms.setdefault(words, category)
        ids = frozenset(scene.objects) | frozenset(scene.rooms) | frozenset(scene.attribute_values())
        id_words = _id_words(scene)
        named = frozenset(o for o, k in scene.objects.items()
                          if [w for w in words_of(o) if len(w) > 1 and not w.isdigit()] != list(words_of(k.category)))
        return cls(things, rooms, PhraseSet(things), PhraseSet(rooms), ids, id_words, PhraseSet(id_words), named)

    def names(self) -> list[Name]:
        """Every name the scene's things go by, as said, with what it names: categories and their
        synonyms, objects by their ids' words, rooms by their categories' words. Plurals are left out:
        "books" is no nearer in meaning to anything than "book" is, and would only crowd the nearest;
        so are ids that are their category and a number or letter ("shelf one", "desk a")."""
        said = [Name(" ".join(w), c, "thing") for w, c in self.things.items()
                if w == words_of(c) or w != (*words_of(c)[:-1], plural(words_of(c)[-1]))]
        said += [Name(" ".join(w), o, "id") for w, o in self.id_words.items() if o in self.named_ids]
        said += [Name(" ".join(w), r, "room") for w, r in self.rooms.items() if "_" not in w[0]]
        return said


NUMBER_WORDS = dict(enumerate("zero one two three four five six seven eight nine ten eleven twelve".split()))


def _id_words(scene: KnownScene) -> dict[Words, str]:
    said: dict[Words, str] = {}
    for oid, known in scene.objects.items():
        words = words_of(oid)
        if len(words) < 2 or words == words_of(known.category or ""):
            continue
        said[words] = oid
        spelt = tuple(NUMBER_WORDS.get(int(w), w) if w.isdigit() else w for w in words)
        said.setdefault(spelt, oid)
    return said


def known_places(objects: Iterable[SceneObject]) -> dict[str, KnownObject]:
    """What a map of scene objects says of where each is, for the translator."""
    return {o.id: KnownObject(o.id, o.category, o.room, o.parent, o.position, dict(o.state),
                              dict(o.attributes), frozenset(o.affordances)) for o in objects}
