"""The offline composer: writes the LMPs' programs from the instruction's parts, with no LLM.

It answers the same (LMP, query) requests an LLM would, with code text in the style of the
prompts, and that code runs through the same sandbox. It understands the phrasings of the
tabletop templates with any colour, corner, side, distance or speed word (nothing is tied to the
values the paper lists), and says plainly when it does not understand a query.
"""
from __future__ import annotations

import re

from conceptagent_ros.errors import ConceptAgentError

SPEEDS = {"a quarter of the speed": 0.25, "quarter of the speed": 0.25, "half the speed": 0.5, "half speed": 0.5,
          "faster speed": 2.0, "a faster speed": 2.0, "double speed": 2.0, "twice the speed": 2.0,
          "slower speed": 0.5, "a slower speed": 0.5, "full speed": 1.0, "normal speed": 1.0}
OBJECT = r"(?:the )?(?P<obj>[a-z]+ (?:block|line|cube))"
TABLE_PLACE = (r"(?:the )?(?P<place>(?:(?:back|front|left|right|center|centre|middle)[ -]?)+"
               r"(?:corner|side|edge|part)? ?(?:of the table)?)")
RELATION = r"(?P<rel>top of|left of|right of|front side of|back side of|front of|back of|behind|above)"
MARGIN_CM = 5  # inset from the table's edge for corners and sides


class OfflineComposerError(ConceptAgentError):
    """The offline composer does not understand the instruction or query."""


def _speed(text: str) -> float:
    for phrase, factor in sorted(SPEEDS.items(), key=lambda kv: -len(kv[0])):
        if phrase in text:
            return factor
    match = re.search(r"(\d+(?:\.\d+)?)\s*(?:x|times) (?:the )?speed", text)
    if match:
        return float(match.group(1))
    raise OfflineComposerError(f"no speed I know in {text!r} (try 'a quarter of the speed', 'faster speed')")


def _quote(text: str) -> str:
    return repr(text)


def composer(instruction: str) -> str:
    """A composer program for one instruction."""
    text = " ".join(instruction.lower().strip().rstrip(".").split())
    lines = ["movable = parse_query_obj('gripper')"]
    maps: list[str] = []

    m = re.fullmatch(rf"move to the {TABLE_PLACE} while staying at least (?P<d>\d+(?:\.\d+)?) ?cm (?:away )?from {OBJECT}",
                     text)
    if m:
        maps = _map_calls(lines, ("affordance", "a point at the " + _place(m["place"])),
                          ("avoidance", f"{m['d']}cm from the {m['obj']}"))
    elif (m := re.fullmatch(rf"move to the {TABLE_PLACE} while staying on the {RELATION} {OBJECT}", text)):
        maps = _map_calls(lines, ("affordance", "a point at the " + _place(m["place"])),
                          ("avoidance", f"everywhere not {_relation(m['rel'])} the {m['obj']}"))
    elif (m := re.fullmatch(rf"move to the {TABLE_PLACE} while moving at (?P<speed>.+?) when within "
                            rf"(?P<d>\d+(?:\.\d+)?) ?cm from (?:the obj|{OBJECT})", text)):
        target = m["obj"] or "nearest block"
        maps = _map_calls(lines, ("affordance", "a point at the " + _place(m["place"])),
                          ("velocity", f"{m['speed']} within {m['d']}cm from the {target}"))
    elif (m := re.fullmatch(rf"move to the {TABLE_PLACE} while moving at (?P<speed>.+?) in the (?P<region>.+)", text)):
        maps = _map_calls(lines, ("affordance", "a point at the " + _place(m["place"])),
                          ("velocity", f"{m['speed']} in the {_place(m['region'])}"))
    elif (m := re.fullmatch(rf"move to the {RELATION} {OBJECT}", text)):
        maps = _map_calls(lines, ("affordance", f"a point {_offset_phrase(m['rel'])} the {m['obj']}"))
    elif (m := re.fullmatch(rf"move to the {TABLE_PLACE}", text)):
        maps = _map_calls(lines, ("affordance", "a point at the " + _place(m["place"])))
    elif (m := re.fullmatch(rf"grasp {OBJECT}(?: from the table)?(?: at (?P<speed>.+))?", text)):
        lines.append(f"target = parse_query_obj({_quote(m['obj'])})")
        calls = [("affordance", f"a point at the center of the {m['obj']}"),
                 ("gripper", f"open everywhere except 1cm around the {m['obj']}")]
        if m["speed"]:
            calls.append(("velocity", m["speed"]))
        lines.append(_execute_line(_map_calls(lines, *calls)))
        # lift above where the block was: a fixed point, not one that rises with the block
        lines.append("x, y, z = target.position")
        lines.append("affordance_map = get_affordance_map(f'a point 15cm above [{x}, {y}, {z}]')")
        maps = ["affordance_map", *_map_calls(lines, ("gripper", "closed everywhere"))]
    elif (m := re.fullmatch(rf"drop {OBJECT} (?:to|on|onto|at) the {TABLE_PLACE}", text)):
        maps = _map_calls(lines, ("affordance", "a point 10cm above the " + _place(m["place"])),
                          ("gripper", "closed everywhere"))
        lines.append(_execute_line(maps))
        _map_calls(lines, ("gripper", "open everywhere"))
    elif (m := re.fullmatch(rf"push {OBJECT} (?:to|toward|towards|into) the {TABLE_PLACE}"
                            rf"(?: while (?:staying|keeping) away from (?:the )?(?P<obstacle>[a-z]+ (?:block|line|cube)))?",
                            text)):
        lines[0] = f"movable = parse_query_obj({_quote(m['obj'])})"
        calls = [("affordance", "a point 2cm above the " + _place(m["place"]))]
        if m["obstacle"]:
            calls.append(("avoidance", f"4cm from the {m['obstacle']}"))
        maps = _map_calls(lines, *calls)
    elif (m := re.fullmatch(rf"push {OBJECT} along {OBJECT.replace('obj', 'line')}", text)):
        # where the block starts, fixed once: re-evaluated maps must not flip ends as the block passes the middle
        lines = [f"movable = parse_query_obj({_quote(m['obj'])})", "x, y, z = movable.position"]
        lines.append(f"affordance_map = get_affordance_map(f'a point at the end of the {m['line']} farthest from "
                     "[{x}, {y}, {z}]')")
        maps = ["affordance_map", *_map_calls(lines, ("avoidance", f"everywhere farther than 2cm from the {m['line']}"))]
    elif (m := re.fullmatch(rf"push {OBJECT} while (?:letting|keeping) it (?:stay )?(?:on|in) the (?P<region>.+)", text)):
        region = _place(m["region"])
        lines = [f"movable = parse_query_obj({_quote(m['obj'])})", "x, y, z = movable.position"]
        lines.append(f"affordance_map = get_affordance_map(f'a point 10cm from [{{x}}, {{y}}, {{z}}] within the {region}')")
        maps = ["affordance_map", *_map_calls(lines, ("avoidance", f"everywhere outside the {region}"))]
    elif (m := re.fullmatch(r"(?:close|shut) the (?P<which>[a-z -]+?) drawer(?: by pushing(?: it)?)?", text)):
        drawer = _drawer(m["which"])
        # both points fixed once: the drawer moves away from re-evaluated maps while it is pushed
        lines += [f"drawer = parse_query_obj({_quote(drawer)})", "(min_x, min_y, min_z), (max_x, max_y, max_z) = drawer.aabb",
                  "x, y, z = drawer.position",
                  "affordance_map = get_affordance_map(f'a point 5cm behind [{min_x}, {y}, {z}]')",
                  "execute(movable, affordance_map=affordance_map)",
                  "cabinet = parse_query_obj('cabinet')", "front_x = cabinet.aabb[0][0]"]
        lines.append("affordance_map = get_affordance_map(f'a point at [{front_x}, {y}, {z}]')")
        maps = ["affordance_map"]
    else:
        raise OfflineComposerError(
            f"the offline composer does not understand {instruction!r}; it knows 'move to the <side/corner>', "
            "'move to the <top of|left of|front side of> the <colour> block', '... while staying at least <d>cm from "
            "...', '... while moving at <speed> ...', 'grasp the <colour> block', 'drop the <colour> block to the "
            "<corner>', 'push the <colour> block to the <corner/side> [while staying away from the <colour> block]', "
            "'push the <colour> block along the <colour> line', 'push the <colour> block while letting it stay on the "
            "<side>', 'close the <topmost|middle|bottom> drawer by pushing'. Use an LLM (--llm openai:MODEL) for others")
    lines.append(_execute_line(maps))
    return "\n".join(lines)


DRAWER_WORDS = {"topmost": "top", "top": "top", "uppermost": "top", "highest": "top", "second to the top": "middle",
                "middle": "middle", "second to the bottom": "middle", "center": "middle", "bottom": "bottom",
                "bottommost": "bottom", "lowest": "bottom", "lowermost": "bottom"}


def _drawer(which: str) -> str:
    """The drawer's name in the scene for a deixis word (three drawers, named bottom/middle/top)."""
    if which not in DRAWER_WORDS:
        raise OfflineComposerError(f"which drawer is {which!r}? (topmost, middle, second to the bottom, bottom, ...)")
    return f"{DRAWER_WORDS[which]} drawer"


def _execute_line(maps: list[str]) -> str:
    return "execute(movable, " + ", ".join(f"{name}={name}" for name in maps) + ")"


def _map_calls(lines: list[str], *calls: tuple[str, str]) -> list[str]:
    """Append `<kind>_map = get_<kind>_map('<query>')` for each call; return the variable names."""
    names = []
    for kind, query in calls:
        lines.append(f"{kind}_map = get_{kind}_map({_quote(query)})")
        names.append(f"{kind}_map")
    return names


def _relation(rel: str) -> str:
    return {"top of": "on top of", "above": "on top of", "front of": "in front of", "front side of": "in front of",
            "back of": "behind", "back side of": "behind", "behind": "behind"}.get(rel, rel)


def _offset_phrase(rel: str) -> str:
    return {"top of": "10cm above", "above": "10cm above", "left of": "10cm to the left of",
            "right of": "10cm to the right of", "front side of": "10cm in front of", "front of": "10cm in front of",
            "back side of": "10cm behind", "back of": "10cm behind", "behind": "10cm behind"}[rel]


def _place(text: str) -> str:
    words = set(re.findall(r"back|front|left|right|center|centre|middle", text))
    if not words:
        raise OfflineComposerError(f"no place on the table in {text!r}")
    if words & {"centre", "middle"}:
        words.add("center")
    order = [w for w in ("back", "front", "left", "right", "center") if w in words]
    kind = "corner" if len(order) == 2 and "center" not in order else "side"
    return " ".join(order) + f" {kind} of the table"


def parse_query_obj(query: str) -> str:
    return f"ret_val = detect({_quote(query)})"


def _table_point(place: str, z_cm: float) -> list[str]:
    """Code lines setting x, y, z to a point at `place` on the table, z_cm above its top."""
    words = place.split()
    x = "center_x"
    y = "center_y"
    if "back" in words:
        x = f"min_x + cm2index({MARGIN_CM}, 'x')"
    if "front" in words:
        x = f"max_x - cm2index({MARGIN_CM}, 'x')"
    if "left" in words:
        y = f"min_y + cm2index({MARGIN_CM}, 'y')"
    if "right" in words:
        y = f"max_y - cm2index({MARGIN_CM}, 'y')"
    return ["table = parse_query_obj('table')", "(min_x, min_y, min_z), (max_x, max_y, max_z) = table.aabb",
            "center_x, center_y, center_z = table.position", f"x = {x}", f"y = {y}",
            f"z = max_z + cm2index({z_cm}, 'z')"]


def get_affordance_map(query: str) -> str:
    q = query.lower().strip()
    body: list[str] = ["affordance_map = get_empty_affordance_map()"]
    if (m := re.fullmatch(r"a point (?:(?P<cm>\d+(?:\.\d+)?)cm above )?(?:at )?the "
                          r"(?P<place>.+ (?:corner|side) of the table)", q)):
        body += _table_point(m["place"], float(m["cm"] or 10))
    elif (m := re.fullmatch(r"a point (?P<cm>\d+(?:\.\d+)?)cm "
                            r"(?P<rel>above|to the left of|to the right of|in front of|behind) the (?P<obj>.+)", q)):
        cm, rel = m["cm"], m["rel"]
        body += [f"obj = parse_query_obj({_quote(m['obj'])})", "(min_x, min_y, min_z), (max_x, max_y, max_z) = obj.aabb",
                 "x, y, z = obj.position",
                 "z = max(z, max_z)  # beside a block: level with its top, not with the table"]
        body += {"above": [f"z = max_z + cm2index({cm}, 'z')"],
                 "to the left of": [f"y = min_y - cm2index({cm}, 'y')"],
                 "to the right of": [f"y = max_y + cm2index({cm}, 'y')"],
                 "in front of": [f"x = max_x + cm2index({cm}, 'x')"],
                 "behind": [f"x = min_x - cm2index({cm}, 'x')"]}[rel]
    elif (m := re.fullmatch(r"a point at the center of the (?P<obj>.+)", q)):
        body += [f"obj = parse_query_obj({_quote(m['obj'])})", "x, y, z = obj.position"]
    elif (m := re.fullmatch(r"a point (?:(?P<cm>\d+(?:\.\d+)?)cm (?P<rel>above|behind|in front of) |at )"
                            r"\[(?P<x>\d+), (?P<y>\d+), (?P<z>\d+)\]", q)):
        body += [f"x, y, z = {m['x']}, {m['y']}, {m['z']}"]
        if m["cm"]:
            body += [{"above": f"z = z + cm2index({m['cm']}, 'z')", "behind": f"x = x - cm2index({m['cm']}, 'x')",
                      "in front of": f"x = x + cm2index({m['cm']}, 'x')"}[m["rel"]]]
    elif (m := re.fullmatch(r"a point at the end of the (?P<line>.+ line) farthest from "
                            r"\[(?P<x>\d+), (?P<y>\d+), (?P<z>\d+)\]", q)):
        body += [f"line = parse_query_obj({_quote(m['line'])})",
                 "(min_x, min_y, min_z), (max_x, max_y, max_z) = line.aabb", f"ox, oy, z = {m['x']}, {m['y']}, {m['z']}",
                 "x, y = line.position[0], line.position[1]",
                 "if max_x - min_x > max_y - min_y:",
                 "    x = min_x + cm2index(3, 'x') if abs(ox - min_x) > abs(ox - max_x) else max_x - cm2index(3, 'x')",
                 "else:",
                 "    y = min_y + cm2index(3, 'y') if abs(oy - min_y) > abs(oy - max_y) else max_y - cm2index(3, 'y')"]
    elif (m := re.fullmatch(r"a point (?P<cm>\d+(?:\.\d+)?)cm from \[(?P<x>\d+), (?P<y>\d+), (?P<z>\d+)\] "
                            r"within the (?P<region>.+ side of the table)", q)):
        cm, words = m["cm"], m["region"].split()
        body += ["table = parse_query_obj('table')", "(min_x, min_y, min_z), (max_x, max_y, max_z) = table.aabb",
                 f"x, y, z = {m['x']}, {m['y']}, {m['z']}",
                 "# along the side's length, toward its roomier end"]
        if "left" in words or "right" in words:
            body.append(f"x = x + cm2index({cm}, 'x') if max_x - x > x - min_x else x - cm2index({cm}, 'x')")
        else:
            body.append(f"y = y + cm2index({cm}, 'y') if max_y - y > y - min_y else y - cm2index({cm}, 'y')")
    else:
        raise OfflineComposerError(f"get_affordance_map: the offline composer does not understand {query!r}")
    body += ["set_voxel_by_radius(affordance_map, [x, y, z], radius_cm=1, value=1)", "ret_val = affordance_map"]
    return "\n".join(body)


def get_avoidance_map(query: str) -> str:
    q = query.lower().strip()
    if (m := re.fullmatch(r"(?P<cm>\d+(?:\.\d+)?)cm from the (?P<obj>.+)", q)):
        # a margin past the asked distance: the descent passes at the edge of what it avoids
        return "\n".join(["avoidance_map = get_empty_avoidance_map()", f"obj = parse_query_obj({_quote(m['obj'])})",
                          "(min_x, min_y, min_z), (max_x, max_y, max_z) = obj.aabb",
                          "half = max(max_x - min_x, max_y - min_y) / 2",
                          f"radius = {m['cm']} + index2cm(half) + 4",
                          "avoidance_map = set_voxel_by_radius(avoidance_map, obj.position, radius_cm=radius, value=1)",
                          "ret_val = avoidance_map"])
    if (m := re.fullmatch(r"everywhere not (?P<rel>to the left of|to the right of|in front of|behind|left of|right of) "
                          r"the (?P<obj>.+)", q)):
        rel = m["rel"].replace("to the ", "")
        region = {"left of": "avoidance_map[:, min_y:, :] = 1", "right of": "avoidance_map[:, :max_y + 1, :] = 1",
                  "in front of": "avoidance_map[:max_x + 1, :, :] = 1", "behind": "avoidance_map[min_x:, :, :] = 1"}[rel]
        return "\n".join(["avoidance_map = get_empty_avoidance_map()", f"obj = parse_query_obj({_quote(m['obj'])})",
                          "(min_x, min_y, min_z), (max_x, max_y, max_z) = obj.aabb", region, "ret_val = avoidance_map"])
    if (m := re.fullmatch(r"everywhere farther than (?P<cm>\d+(?:\.\d+)?)cm from the (?P<line>.+)", q)):
        return "\n".join(["avoidance_map = get_empty_avoidance_map()", f"line = parse_query_obj({_quote(m['line'])})",
                          "(min_x, min_y, min_z), (max_x, max_y, max_z) = line.aabb",
                          f"rx, ry = cm2index({m['cm']}, 'x'), cm2index({m['cm']}, 'y')",
                          "avoidance_map[:, :, :] = 1",
                          "avoidance_map[max(min_x - rx, 0):max_x + rx + 1, max(min_y - ry, 0):max_y + ry + 1, :] = 0",
                          "ret_val = avoidance_map"])
    if (m := re.fullmatch(r"everywhere outside the (?P<region>.+ side of the table)", q)):
        words = m["region"].split()
        # a margin inside the side's border, so that a block kept there stays wholly on it
        region = ("avoidance_map[:, :cy + margin_y, :] = 1" if "right" in words else
                  "avoidance_map[:, max(cy - margin_y, 0):, :] = 1" if "left" in words else
                  "avoidance_map[max(cx - margin_x, 0):, :, :] = 1" if "back" in words else
                  "avoidance_map[:cx + margin_x, :, :] = 1")
        return "\n".join(["avoidance_map = get_empty_avoidance_map()", "table = parse_query_obj('table')",
                          "cx, cy, cz = table.position", "margin_x, margin_y = cm2index(4, 'x'), cm2index(4, 'y')",
                          region, "ret_val = avoidance_map"])
    raise OfflineComposerError(f"get_avoidance_map: the offline composer does not understand {query!r}")


def get_velocity_map(query: str) -> str:
    q = query.lower().strip()
    factor = _speed(q)
    if (m := re.search(r"within (?P<cm>\d+(?:\.\d+)?)cm from the (?P<obj>.+)", q)):
        target = m["obj"]
        find = (f"obj = parse_query_obj({_quote(target)})" if target != "nearest block" else
                "obj = parse_query_obj('gripper')")
        # "within d cm from the block" is from its surface: the ball around its centre that holds every
        # point within d of its box reaches d + half-diagonal (sqrt(3) x half-size for a cube)
        return "\n".join(["velocity_map = get_empty_velocity_map()", find,
                          "(min_x, min_y, min_z), (max_x, max_y, max_z) = obj.aabb",
                          "half = max(max_x - min_x, max_y - min_y, max_z - min_z) / 2",
                          f"radius = {m['cm']} + index2cm(half) * 1.75",
                          "set_voxel_by_radius(velocity_map, obj.position, radius_cm=radius, value=" + f"{factor})",
                          "ret_val = velocity_map"])
    if (m := re.search(r"in the (?P<place>.+ side of the table)", q)):
        words = m["place"].split()
        region = ("velocity_map[:, center_y:, :]" if "right" in words else "velocity_map[:, :center_y, :]" if "left" in words
                  else "velocity_map[:center_x, :, :]" if "back" in words else "velocity_map[center_x:, :, :]")
        return "\n".join(["velocity_map = get_empty_velocity_map()", "table = parse_query_obj('table')",
                          "center_x, center_y, center_z = table.position", f"{region} = {factor}", "ret_val = velocity_map"])
    return "\n".join(["velocity_map = get_empty_velocity_map()", f"velocity_map[:, :, :] = {factor}", "ret_val = velocity_map"])


def get_gripper_map(query: str) -> str:
    q = query.lower().strip()
    if q in ("closed everywhere", "close everywhere"):
        return "gripper_map = get_empty_gripper_map()\ngripper_map[:, :, :] = 1\nret_val = gripper_map"
    if q in ("open everywhere",):
        return "gripper_map = get_empty_gripper_map()\ngripper_map[:, :, :] = 0\nret_val = gripper_map"
    if (m := re.fullmatch(r"open everywhere except (?P<cm>\d+(?:\.\d+)?)cm around the (?P<obj>.+)", q)):
        return "\n".join(["gripper_map = get_empty_gripper_map()", "gripper_map[:, :, :] = 0",
                          f"obj = parse_query_obj({_quote(m['obj'])})",
                          f"set_voxel_by_radius(gripper_map, obj.position, radius_cm={m['cm']}, value=1)",
                          "ret_val = gripper_map"])
    raise OfflineComposerError(f"get_gripper_map: the offline composer does not understand {query!r}")


def get_rotation_map(query: str) -> str:
    return "rotation_map = get_empty_rotation_map()\nret_val = rotation_map"


def planner(instruction: str) -> str:
    return f"composer({_quote(instruction)})"


WRITERS = {"planner": planner, "composer": composer, "parse_query_obj": parse_query_obj,
           "get_affordance_map": get_affordance_map, "get_avoidance_map": get_avoidance_map,
           "get_velocity_map": get_velocity_map, "get_gripper_map": get_gripper_map, "get_rotation_map": get_rotation_map}


def write_program(lmp: str, query: str) -> str:
    if lmp not in WRITERS:
        raise OfflineComposerError(f"no offline writer for LMP {lmp!r}")
    return WRITERS[lmp](query)
