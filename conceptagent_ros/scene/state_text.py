"""The compact state description an LLM reads: where the robot is, what it holds, what it has seen."""
from __future__ import annotations

from conceptagent_ros.scene.graph import SceneGraph

_FLAG_WORDS = {
    "open": ("open", "closed"), "is_on": ("on", "off"), "heated": ("hot", None), "cold": ("cold", None),
    "sliced": ("sliced", None), "filled": ("filled with water", None), "dirty": ("dirty", None),
}


def describe_state(graph: SceneGraph, max_objects: int = 400) -> str:
    robot = graph.robot
    state = graph.symbolic_state()
    near = sorted(o for o in graph.objects if ("near", o) in state.atoms and o != robot.holding)
    lines = [
        f"Robot: in {robot.room}; holding {robot.holding or 'nothing'}; within reach: {', '.join(near) or 'nothing'}.",
        f"Rooms (from the map): {', '.join(sorted(graph.rooms))}; visited: {', '.join(sorted(graph.visited_rooms))}.",
        "Observed objects (id: category, where, state):",
    ]
    shown = 0
    for room in sorted(graph.rooms):
        members = [o for o in graph.objects.values() if o.room == room]
        if not members:
            continue
        lines.append(f"  [{room}]")
        for obj in sorted(members, key=lambda o: o.id):
            if shown >= max_objects:
                break
            shown += 1
            where = f"in/on {obj.parent}" if obj.parent else ("held" if obj.id == robot.holding else "")
            flags = []
            for key, (yes, no) in _FLAG_WORDS.items():
                if key in obj.state or (key == "open" and obj.has("openable")):
                    word = yes if obj.flag(key) else no
                    if word:
                        flags.append(word)
            if obj.id in graph.searched:
                flags.append("searched")
            detail = "; ".join(x for x in (where, ", ".join(flags)) if x)
            lines.append(f"  - {obj.id}: {obj.category}" + (f" ({detail})" if detail else ""))
    if len(graph.objects) > shown:
        lines.append(f"  ... and {len(graph.objects) - shown} more objects")
    lines.append("Objects inside closed containers and in rooms not yet visited are not observed yet.")
    return "\n".join(lines)
