"""Instructions: validation, and the no-LLM translator's entry point that turns household commands
into PDDL goals ("put the apple in the fridge" -> (exists (?a0 - apple ?f1 - fridge) (in ?a0 ?f1))).

The translator (planning/free_text/) serves the offline backend and judges success of `conceptagent
run` when no --goal is given; an LLM backend asks the model when it refuses the command.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping

from conceptagent_ros.errors import InstructionError
from conceptagent_ros.planning.free_text.known import KnownObject, KnownScene
from conceptagent_ros.planning.free_text.translate import translate

MAX_INSTRUCTION_CHARS = 2000


def clean_instruction(text: str) -> str:
    """Normalise whitespace and control characters; refuse empty or absurdly long input."""
    if text is None:
        raise InstructionError("the instruction is empty; say what the robot should do")
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in str(text))
    text = " ".join(text.split())
    if not text:
        raise InstructionError("the instruction is empty; say what the robot should do")
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise InstructionError(f"the instruction is {len(text)} characters long; the limit is {MAX_INSTRUCTION_CHARS}")
    return text


def interpret_instruction(instruction: str, categories: Iterable[str], object_ids: Iterable[str] = (),
                          attributes: Mapping[str, Mapping[str, str]] | None = None,
                          places: Mapping[str, KnownObject] | None = None, rooms: Mapping[str, str] | None = None,
                          complete: bool = True) -> str:
    """PDDL goal for an instruction, or InstructionError naming what was not understood
    (planning/free_text/). With `object_ids` a mapping (id -> category), their `attributes` and
    `places` (what is known of where each is), a phrase that says which one ("the red book", "the
    bathroom sink", "the pillow on the sofa") names that object; `rooms` maps room ids to their
    categories; `complete`: every object of the scene is among those known."""
    scene = KnownScene.build(categories, object_ids, attributes, places, rooms, complete)
    return translate(clean_instruction(instruction), scene)
