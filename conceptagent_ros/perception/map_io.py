"""Saving and loading the fused map: JSON, written atomically (a crash mid-save leaves the
previous file whole), and the map's points as a PLY point cloud coloured by object."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from conceptagent_ros.atomic_files import write_atomic
from conceptagent_ros.perception.fusion import FusionConfig, MapObject, ObjectMap

FORMAT = "conceptagent-object-map/1"


def map_to_json(object_map: ObjectMap, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    from conceptagent_ros.perception.relations3d import spatial_relations

    relations = spatial_relations({oid: o.box for oid, o in object_map.objects.items()})
    return {
        "format": FORMAT, "frames": object_map.frames,
        "objects": [o.to_json() for o in object_map.objects.values()],
        "relations": [{"subject": r.subject, "relation": r.relation, "object": r.object} for r in relations],
        **(extra or {}),
    }


def save_map(object_map: ObjectMap, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
    out = Path(path)
    write_atomic(out, json.dumps(map_to_json(object_map, extra)))
    return out


def load_map(path: str | Path, config: FusionConfig | None = None) -> ObjectMap:
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{source}: not a readable object map: {e}") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{source}: not an object map (format {data.get('format') if isinstance(data, dict) else '?'!r}, "
                         f"expected {FORMAT!r})")
    object_map = ObjectMap(config or FusionConfig())
    try:
        for raw in data["objects"]:
            obj = MapObject.from_json(raw)
            object_map.objects[obj.id] = obj
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{source}: malformed object entry: {e}") from e
    object_map.frames = int(data.get("frames", 0))
    return object_map


def label_colour(label: str) -> tuple[float, float, float]:
    """A stable colour per label (the same in the PLY, the picture and rviz)."""
    h = 0
    for ch in label:
        h = (h * 131 + ord(ch)) & 0xFFFFFF
    rng = np.random.default_rng(h)
    return tuple(float(v) for v in 0.25 + 0.75 * rng.random(3))  # type: ignore[return-value]


def save_ply(object_map: ObjectMap, path: str | Path) -> Path:
    """ASCII PLY of every object's points, coloured by label (open3d and MeshLab read it)."""
    out = Path(path)
    rows: list[str] = []
    for obj in object_map.objects.values():
        r, g, b = (int(255 * c) for c in label_colour(obj.label))
        rows.extend(f"{x:.4f} {y:.4f} {z:.4f} {r} {g} {b}" for x, y, z in obj.points)
    header = ["ply", "format ascii 1.0", f"element vertex {len(rows)}", "property float x", "property float y",
              "property float z", "property uchar red", "property uchar green", "property uchar blue", "end_header"]
    write_atomic(out, "\n".join(header + rows) + "\n")
    return out
