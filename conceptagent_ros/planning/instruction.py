"""Instructions: validation, and a small rule grammar that turns common household commands into
PDDL goals ("put the apple in the fridge" -> (exists (?a - apple ?b - fridge) (in ?a ?b))).

The grammar serves the offline backend and judges success of `conceptagent run` when no --goal is
given; an LLM backend asks the model when the grammar does not understand the command.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from conceptagent_ros.errors import InstructionError

MAX_INSTRUCTION_CHARS = 2000

SYNONYMS = {
    "refrigerator": "fridge", "counter": "countertop", "counter top": "countertop", "kitchen counter": "countertop",
    "plant": "houseplant", "stove": "stove_burner", "burner": "stove_burner", "tv": "television",
    "trash": "garbage_can", "trash can": "garbage_can", "bin": "garbage_can", "garbage": "garbage_can",
    "sponge": "dish_sponge", "remote": "remote_control", "phone": "cell_phone", "couch": "sofa",
    "cupboard": "cabinet", "sink basin": "sink", "tap": "sink", "faucet": "sink", "mug": "mug",
    "lamp": "lamp", "table": "table", "desk lamp": "lamp", "shelves": "shelf", "tub": "bathtub",
}
VERBS: list[tuple[str, str, bool]] = [  # pattern, predicate, value
    (r"(?:heat|cook|warm(?: up)?|microwave|boil|toast|fry|bake)", "heated", True),
    (r"(?:chill|cool(?: down)?|refrigerate)", "cold", True),
    (r"(?:slice|cut|chop)", "sliced", True),
    (r"(?:fill)", "filled", True),
    (r"(?:water)", "filled", True),
    (r"(?:wash|clean|rinse|scrub)", "dirty", False),
    (r"(?:open)", "open", True),
    (r"(?:close|shut)", "open", False),
]
PLACE_VERBS = (r"(?:put|place|move|bring|take|store|leave|throw|toss|drop|dump|set|return|carry|stash|stick|stow|"
               r"tuck|load|hide|shove|chuck|get)")
COLOUR_WORDS = frozenset({"red", "blue", "green", "yellow", "white", "black", "grey", "gray", "brown", "pink",
                          "purple", "orange", "beige", "silver", "gold", "violet", "cyan", "magenta"})
RELATIONS = r"(?:in|into|inside|on|onto|on top of|to|at|in the inside of)"
ARTICLES = r"(?:the|a|an|some|one|any|my|your)"


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


@dataclass
class _GoalBuilder:
    categories: set[str]
    object_ids: set[str]
    object_types: Mapping[str, str] = field(default_factory=dict)  # object id -> category
    attributes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # object id -> {"colour": "red"}
    variables: dict[str, str] = field(default_factory=dict)  # category -> variable
    literals: list[str] = field(default_factory=list)
    named: list[str] = field(default_factory=list)  # the terms in the order the instruction named them

    def term(self, phrase: str, other_than: str | None = None) -> str:
        """The goal term a noun phrase names; a pronoun is the latest term named before, other than
        `other_than` ("open the drawer and put the lego in it": it is the drawer, not the lego)."""
        phrase = re.sub(rf"^{ARTICLES}\s+", "", phrase.strip()).strip()
        phrase = re.sub(r"\b(?:with water|away|please|now|too|again|up)\b", "", phrase).strip()
        # "the bowl that is on the counter", "the pan on the stove": where a thing is, not what it is
        phrase = re.sub(r"\s+(?:that|which)\s+(?:is|are|was|were|sits|lies)\b.*$", "", phrase).strip()
        phrase = re.sub(r"\s+(?:on|in|inside|at|near|by|next to|beside)\s+.*$", "", phrase).strip()
        if phrase in ("it", "them", "that", "this"):
            earlier = [t for t in self.named if t != other_than]
            if earlier:
                return earlier[-1]
        key = phrase.replace(" ", "_")
        if key in self.object_ids:
            self.named.append(key)
            return key
        category = self._category(phrase)
        chosen = self._by_attributes(phrase, category)
        if chosen is not None:
            self.named.append(chosen)
            return chosen
        if category not in self.variables:
            self.variables[category] = f"?{category[:1]}{len(self.variables)}"
        self.named.append(self.variables[category])
        return self.variables[category]

    def _by_attributes(self, phrase: str, category: str) -> str | None:
        """The one object of `category` the phrase's adjectives pick ("the red book"), when they are
        values of the scene's attributes; None when the phrase has no such adjective."""
        values = {v for attrs in self.attributes.values() for v in attrs.values()}
        if any("colour" in attrs or "color" in attrs for attrs in self.attributes.values()):
            values |= COLOUR_WORDS  # a colour no object has is a request for one that is not here
        text = f" {phrase} "
        wanted = sorted((v for v in values if f" {v} " in text), key=lambda v: text.index(f" {v} "))
        if not wanted:
            return None
        kind = [o for o, c in self.object_types.items() if c == category]
        chosen = [o for o in kind if set(wanted) <= set(self.attributes.get(o, {}).values())]
        if len(chosen) == 1:
            return chosen[0]
        described = ", ".join(f"{o} ({', '.join(self.attributes.get(o, {}).values()) or 'no attributes'})"
                              for o in sorted(kind)) or "none"
        if not chosen:
            raise InstructionError(f"no {' '.join(wanted)} {category.replace('_', ' ')} here; "
                                   f"the {category.replace('_', ' ')}s known: {described}")
        raise InstructionError(f"'{phrase}' fits {len(chosen)} objects ({', '.join(sorted(chosen))}); say which")

    def _category(self, phrase: str) -> str:
        words = phrase.split()
        for n in range(min(3, len(words)), 0, -1):  # the head noun is at the end: "the red apple"
            tail = " ".join(words[-n:])
            for candidate in (tail, tail.rstrip("s"), tail[:-2] if tail.endswith("es") else tail):
                candidate = SYNONYMS.get(candidate, candidate)
                key = candidate.replace(" ", "_")
                if key in self.categories:
                    return key
        # "wine" for the scene's wine_bottle: a category with the word as one of its parts, if only one
        head = words[-1] if words else ""
        for word in (head, head.rstrip("s")):
            matches = sorted(c for c in self.categories if word and word in c.split("_"))
            if len(matches) == 1:
                return matches[0]
        raise InstructionError(f"I do not know what '{phrase}' is; known things include: "
                               + ", ".join(sorted(self.categories)[:30]) + ", ...")

    def goal(self) -> str:
        body = self.literals[0] if len(self.literals) == 1 else "(and " + " ".join(self.literals) + ")"
        if not self.variables:
            return body
        decl = " ".join(f"{v} - {c}" for c, v in self.variables.items())
        return f"(exists ({decl}) {body})"


def interpret_instruction(instruction: str, categories: Iterable[str], object_ids: Iterable[str] = (),
                          attributes: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """PDDL goal for an instruction, or InstructionError saying what was not understood. With
    `object_ids` a mapping (id -> category) and the objects' `attributes`, adjectives that are
    attribute values pick one object ("the red book" -> book_1)."""
    text = clean_instruction(instruction).lower()
    text = re.sub(r"[^a-z0-9_ ,;]", " ", text)
    types = dict(object_ids) if isinstance(object_ids, Mapping) else {}
    builder = _GoalBuilder(set(categories), set(object_ids), types, attributes or {})
    clauses = [c.strip() for c in re.split(r",|;|\band then\b|\bthen\b|\band\b", text) if c.strip()]
    for clause in clauses:
        clause = re.sub(r"^(?:please|robot|can you|could you|now|also)\s+", "", clause)
        clause = re.sub(r"^(?:the agent should|you should|go and|go)\s+", "", clause)
        clause = re.sub(r"^(?:find|pick up|grab|get)\s+(.+?)\s+and\s+", "put \\1 ", clause)
        taken = re.match(r"^(?:take|get|grab|remove|pick up|fetch)\s+(.+?)\s+(?:out of|from|off)\s+.+$", clause)
        if taken:  # a step on the way, not the goal; "it" in the next clause means this object
            builder.term(taken.group(1))
            continue
        literal = _clause_literal(clause, builder)
        if literal is None:
            found = re.match(r"^(?:find|pick up|grab|get|look for|locate)\s+(.+)$", clause)
            if found:  # the finding is implied by what follows, where "it" means this object
                try:
                    builder.term(re.sub(rf"\s+{RELATIONS}\s+.*$", "", found.group(1)))
                except InstructionError:
                    pass  # a thing to find that names no known kind: what follows may still be clear
                continue
            raise InstructionError(f"I do not understand '{clause}'. Try e.g. 'put the apple in the fridge', "
                                   "'slice the bread', 'turn on the lamp', or pass a PDDL goal with --goal")
        builder.literals.append(literal)
    if not builder.literals:
        raise InstructionError("the instruction names no change to make; try e.g. 'put the apple in the fridge'")
    return builder.goal()


def _clause_literal(clause: str, b: _GoalBuilder) -> str | None:
    # "bring the cup from the dining table to the sink": where it comes from is not where it goes
    clause = re.sub(r"\s+(?:from|off|out of)\s+(?:the\s+)?[a-z0-9_ ]+?\s+(?=(?:to|into|in|onto|on|back)\s)", " ", clause)
    clause = re.sub(rf"^{PLACE_VERBS}\s+(.+?)\s+(?:away|over|back)\s+({RELATIONS})\s", r"put \1 \2 ", clause)
    m = re.match(rf"^{PLACE_VERBS}\s+(.+?)\s+(?:back\s+)?{RELATIONS}\s+(.+)$", clause)
    if m:
        obj = b.term(m.group(1))
        dest = b.term(m.group(2), other_than=obj)
        return f"(in {obj} {dest})"
    m = re.match(r"^(?:turn|switch|power)\s+(on|off)\s+(.+)$", clause) or re.match(r"^(?:turn|switch)\s+(.+)\s+(on|off)$", clause)
    if m:
        state, phrase = (m.group(1), m.group(2)) if m.group(1) in ("on", "off") else (m.group(2), m.group(1))
        t = b.term(phrase)
        return f"(is_on {t})" if state == "on" else f"(not (is_on {t}))"
    for pattern, predicate, value in VERBS:
        m = re.match(rf"^{pattern}\s+(.+)$", clause)
        if m:
            t = b.term(m.group(1))
            return f"({predicate} {t})" if value else f"(not ({predicate} {t}))"
    return None
