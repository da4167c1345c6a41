"""Easy tasks over a generated house (ConceptAgent IV-A's easy level): pick up a thing that is in
plain view and put it where such a thing belongs (config/house_generation.yaml `destinations`).
Where the house has several places of the destination's kind, "the shelf" is any of them, as the
built-in suites read a destination's "the" (config/tasks/easy.yaml)."""
from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from conceptagent_ros.world.generation.rules import HouseRules

CONTAINER_WORDS = {"sink", "garbage_can", "bathtub", "bowl", "pot", "pan", "cup", "mug", "box", "fridge", "freezer",
                   "cabinet", "drawer", "microwave", "oven", "dresser", "vase"}
PLURAL = {"keys"}


def preposition(category: str) -> str:
    return "in" if category in CONTAINER_WORDS else "on"


def easy_tasks(house_name: str, scene_file: str, objects: list[dict[str, Any]], rules: HouseRules,
               rng: np.random.Generator, count: int) -> list[dict[str, Any]]:
    """Up to `count` tasks, each on a different thing, as task-file entries."""
    by_id = {o["id"]: o for o in objects}
    openable = {"fridge", "freezer", "cabinet", "drawer", "microwave", "oven", "dresser"}
    kinds = Counter(o["category"] for o in objects)

    def in_view(thing: dict[str, Any]) -> bool:
        holder = by_id.get(thing.get("in", ""))
        while holder is not None:
            if holder["category"] in openable:
                return False
            holder = by_id.get(holder.get("in", ""))
        return "in" in thing

    visible = [o for o in objects if "in" in o and o["category"] in rules.destinations and in_view(o)]
    tasks: list[dict[str, Any]] = []
    for i in rng.permutation(len(visible)):
        if len(tasks) >= count:
            break
        thing = visible[int(i)]
        holder = by_id[thing["in"]]
        places = [o for o in objects
                  if o["category"] in rules.destinations[thing["category"]] and o["category"] != holder["category"]
                  and o["id"] != thing["id"] and o.get("in") != thing["id"]]
        if not places:
            continue
        dest = places[int(rng.integers(len(places)))]
        word = rules.word
        pronoun = "them" if thing["category"] in PLURAL else "it"
        instruction = (f"The agent should pick up the {word(thing['category'])} {preposition(holder['category'])} the "
                       f"{word(holder['category'])} and place {pronoun} {preposition(dest['category'])} the "
                       f"{word(dest['category'])}.")
        goal = (f"(exists (?d - {dest['category']}) (in {thing['id']} ?d))" if kinds[dest["category"]] > 1
                else f"(in {thing['id']} {dest['id']})")
        tasks.append({"id": f"{house_name}_easy_{len(tasks) + 1:02d}", "scene": scene_file,
                      "instruction": instruction, "goal": goal})
    return tasks
