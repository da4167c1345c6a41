"""A top-down picture of the object map: each object's points in its label's colour, its box, its
label, and the on/in relations as arrows (PNG, matplotlib without a display)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from conceptagent_ros.perception.fusion import ObjectMap
from conceptagent_ros.perception.map_io import label_colour
from conceptagent_ros.perception.relations3d import spatial_relations


def draw_map(object_map: ObjectMap, path: str | Path, title: str = "") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(path)
    fig, ax = plt.subplots(figsize=(10, 8), dpi=110)
    objects = list(object_map.objects.values())
    for obj in objects:
        colour = label_colour(obj.label)
        pts = obj.points[:: max(1, obj.points.shape[0] // 400)]
        ax.scatter(pts[:, 0], pts[:, 1], s=2, color=colour, alpha=0.5, linewidths=0)
        corners = obj.box.corners()[[0, 2, 6, 4, 0], :2]  # the bottom face, in order around it
        ax.plot(corners[:, 0], corners[:, 1], color=colour, linewidth=1.0)
    for obj in objects:  # labels on top of every cloud
        c = obj.centroid
        ax.annotate(f"{obj.id}", (c[0], c[1]), fontsize=7, ha="center", va="center",
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": label_colour(obj.label), "alpha": 0.8})
    for rel in spatial_relations({o.id: o.box for o in objects}):
        if rel.relation == "near":
            continue
        a, b = object_map.objects[rel.subject].centroid, object_map.objects[rel.object].centroid
        if math.dist(a[:2], b[:2]) > 1e-3:
            ax.annotate("", xy=(b[0], b[1]), xytext=(a[0], a[1]),
                        arrowprops={"arrowstyle": "->", "color": "0.4", "linewidth": 0.6, "linestyle": ":"})
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    points = sum(o.points.shape[0] for o in objects)
    ax.set_title(title or f"{len(objects)} objects, {points} points (dotted arrows: on / in)")
    ax.grid(True, linewidth=0.3, alpha=0.5)
    if not objects:
        ax.text(0.5, 0.5, "no objects", transform=ax.transAxes, ha="center")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def summary_lines(object_map: ObjectMap, limit: int = 40) -> list[str]:
    lines = []
    for obj in sorted(object_map.objects.values(), key=lambda o: (-o.detections, o.id))[:limit]:
        c = np.round(obj.centroid, 2)
        lines.append(f"  {obj.id:<24} {obj.label:<16} seen {obj.detections:>4}x  at ({c[0]:.2f}, {c[1]:.2f}, {c[2]:.2f})"
                     f"  {obj.points.shape[0]} points")
    if len(object_map.objects) > limit:
        lines.append(f"  ... and {len(object_map.objects) - limit} more")
    return lines
