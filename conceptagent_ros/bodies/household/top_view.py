"""A household task on the body, from above (PNG, matplotlib without a display): the walls, every
thing where PyBullet has it at the end (furniture grey, things that move in colour, the goal's
things named in red), the path the base drove, and the robot where it stopped.

It reads the simulator's state (bodies' boxes), not what the robot perceived: the picture shows what
happened, for a person to see why a task failed."""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from conceptagent_ros.world.floor_plan import Wall


def draw_top_view(p: Any, client: int, bodies: Mapping[str, int], movable: Collection[str], walls: Sequence[Wall],
                  trail: Sequence[tuple[float, float]], robot_at: tuple[float, float], robot_radius: float, path: Path,
                  title: str = "", goal_objects: Collection[str] = ()) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, Rectangle

    fig, ax = plt.subplots(figsize=(9, 8), dpi=100)
    for wall in walls:
        ax.add_patch(Rectangle((wall.x0, wall.y0), wall.x1 - wall.x0, wall.y1 - wall.y0, color="0.25"))
    # furniture first, then the things on it, so a thing is drawn over what it stands on
    for name in sorted(bodies, key=lambda n: (n in movable, n)):
        if name in ("ground_plane", "walls"):  # the walls are drawn from the floor plan, one by one
            continue
        lo, hi = (np.asarray(v) for v in p.getAABB(bodies[name], physicsClientId=client))
        goal = name in goal_objects
        if name in movable:
            style = {"facecolor": "tab:red" if goal else "tab:blue", "edgecolor": "black", "alpha": 0.9,
                     "linewidth": 0.5}
        else:
            style = {"facecolor": "0.85", "edgecolor": "tab:red" if goal else "0.5", "linewidth": 1.5 if goal else 0.5}
        ax.add_patch(Rectangle((lo[0], lo[1]), hi[0] - lo[0], hi[1] - lo[1], **style))
        for link in range(p.getNumJoints(bodies[name], physicsClientId=client)):  # a door or a drawer, as it stands
            lo_link, hi_link = (np.asarray(v) for v in p.getAABB(bodies[name], link, physicsClientId=client))
            ax.add_patch(Rectangle((lo_link[0], lo_link[1]), hi_link[0] - lo_link[0], hi_link[1] - lo_link[1],
                                   facecolor="0.6", edgecolor="0.3", linewidth=0.5))
        if goal or name not in movable:
            ax.annotate(name, ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2), fontsize=6 if not goal else 8,
                        ha="center", va="center", color="tab:red" if goal else "0.35",
                        fontweight="bold" if goal else "normal")
    if len(trail) > 1:
        xy = np.asarray(trail)
        ax.plot(xy[:, 0], xy[:, 1], color="tab:green", linewidth=1.5, label="the base's path")
        ax.plot(*xy[0], marker="o", color="tab:green", markersize=7, label="start")
    ax.add_patch(Circle(robot_at, robot_radius, facecolor="none", edgecolor="tab:green", linewidth=2.0,
                        label="the robot at the end"))
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.legend(loc="upper right", fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
