"""The symbolic state: ground boolean atoms over object ids, plus each object's type (category).

This is what preconditions and goals are evaluated on. It is derived from the scene graph (what the
robot believes) or from the true world (to judge success), never written by hand.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import yaml

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.paths import config_dir

Atom = tuple[str, ...]  # ("in", "apple_1", "fridge_1"); ("hand_empty",)
ROOT_TYPE = "object"


@dataclass(frozen=True)
class PredicateSpec:
    name: str
    params: tuple[str, ...]
    description: str
    true_text: str
    false_text: str
    static: bool = False
    requires: tuple[str | None, ...] = ()  # the affordance each argument needs for the atom ever to hold
    # At most one atom of the predicate holds at a time for the same first argument (`in`: a thing is
    # in one place), or at all (`holding`: one gripper); `excludes`: predicates that cannot hold beside it.
    # the affordance each argument needs for a skill to make the atom true (`in`: only what can be picked
    # up is ever put anywhere); a goal wanting it otherwise is refused, even where it may hold already
    made_only_if: tuple[str | None, ...] = ()
    functional: bool = False
    at_most_one: bool = False
    excludes: tuple[str, ...] = ()

    @property
    def arity(self) -> int:
        return len(self.params)

    def words(self, args: tuple[str, ...], value: bool) -> str:
        return (self.true_text if value else self.false_text).format(*args)

    def signature(self) -> str:
        return "(" + " ".join([self.name] + [f"?{p}" for p in self.params]) + ")"


@lru_cache(maxsize=1)
def load_predicates() -> tuple[PredicateSpec, ...]:
    path = config_dir() / "predicates.yaml"
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))["predicates"]
        return tuple(
            PredicateSpec(
                name=p["name"], params=tuple(p["params"]), description=p["description"],
                true_text=p["when_true"], false_text=p["when_false"], static=bool(p.get("static", False)),
                requires=tuple(p.get("requires") or ()), made_only_if=tuple(p.get("made_only_if") or ()),
                functional=bool(p.get("functional", False)),
                at_most_one=bool(p.get("at_most_one", False)), excludes=tuple(p.get("excludes") or ()),
            )
            for p in raw
        )
    except (OSError, KeyError, TypeError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: malformed predicate list: {e}") from e


def predicates_by_name() -> dict[str, PredicateSpec]:
    return {p.name: p for p in load_predicates()}


@dataclass(frozen=True)
class SymbolicState:
    """An immutable set of true atoms (closed world: every other atom is false)."""

    atoms: frozenset[Atom]
    types: Mapping[str, str]  # object id -> type name
    _by_type: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False, hash=False, repr=False)
    _by_predicate: dict[str, tuple[Atom, ...]] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def holds(self, atom: Atom) -> bool:
        return atom in self.atoms

    @property
    def objects(self) -> tuple[str, ...]:
        return self.objects_of_type(ROOT_TYPE)

    def objects_of_type(self, type_name: str) -> tuple[str, ...]:
        cached = self._by_type.get(type_name)
        if cached is None:
            if type_name == ROOT_TYPE:
                cached = tuple(self.types)
            else:
                cached = tuple(o for o, t in self.types.items() if t == type_name)
            self._by_type[type_name] = cached
        return cached

    def has_type(self, obj: str, type_name: str) -> bool:
        """Is `obj` among objects_of_type(type_name)? (Asked of the types map, not the tuple.)"""
        known = self.types.get(obj)
        return known is not None and (type_name == ROOT_TYPE or known == type_name)

    def atoms_of(self, predicate: str) -> tuple[Atom, ...]:
        """The true atoms of one predicate (indexed once per state, for the effect model's quantifiers)."""
        if not self._by_predicate:
            index: dict[str, list[Atom]] = {}
            for atom in self.atoms:
                index.setdefault(atom[0], []).append(atom)
            self.adopt_index({name: tuple(found) for name, found in index.items()})
        return self._by_predicate.get(predicate, ())

    def indexed(self) -> dict[str, tuple[Atom, ...]] | None:
        """The per-predicate index if built (the "" key marks it built, even for a state with no atoms)."""
        return self._by_predicate if self._by_predicate else None

    def adopt_index(self, index: Mapping[str, tuple[Atom, ...]]) -> None:
        """Take a per-predicate index worked out elsewhere (from a parent state's, by the effect model)."""
        self._by_predicate.update(index)
        self._by_predicate.setdefault("", ())

    def with_atoms(self, add: Iterable[Atom] = (), remove: Iterable[Atom] = ()) -> SymbolicState:
        return SymbolicState(frozenset((self.atoms - set(remove)) | set(add)), self.types)

    def true_atoms_of(self, predicate: str) -> list[Atom]:
        return sorted(a for a in self.atoms if a[0] == predicate)


def atom_text(atom: Atom) -> str:
    return "(" + " ".join(atom) + ")"
