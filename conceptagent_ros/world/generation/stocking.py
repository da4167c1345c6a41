"""Things in the places they are usually found (config/house_generation.yaml `things`), each kind
at most once in a house, so that "the mug" in an instruction names one thing."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conceptagent_ros.world.generation.rules import HouseRules


@dataclass(frozen=True)
class Thing:
    id: str
    category: str
    holder: str  # the id of the furniture it is in or on


def stock(holders: list[tuple[str, str, str]], rules: HouseRules, rng: np.random.Generator,
          ids: dict[str, int]) -> list[Thing]:
    """Things for the holders (id, category, the kind of room it stands in), in order; `ids` counts
    the ids given per category."""
    used: set[str] = set()
    things: list[Thing] = []
    for holder_id, category, room in holders:
        rule = rules.things_for(room, category)
        if rule is None:
            continue
        count = int(rng.integers(rule.count[0], rule.count[1] + 1))
        kinds = [k for k in rule.kinds if k not in used]
        for kind in rng.permutation(kinds)[:count] if kinds else []:
            kind = str(kind)
            used.add(kind)
            ids[kind] = ids.get(kind, 0) + 1
            things.append(Thing(f"{kind}_{ids[kind]}", kind, holder_id))
    return things
