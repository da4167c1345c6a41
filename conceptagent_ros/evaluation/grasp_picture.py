"""A picture of grasp candidates on the cloud they were planned from: the object's points, the
surroundings' points near it, and each candidate hand as its two fingers and palm (the best in
green, the others in grey), seen from two sides."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from conceptagent_ros.manipulation.grasp_planner import GraspCandidate, GraspPlan
from conceptagent_ros.manipulation.robot_spec import GripperSpec


def hand_lines(candidate: GraspCandidate, gripper: GripperSpec) -> list[np.ndarray]:
    """Polylines of the open hand: each finger from tip to base, and the palm bar joining them."""
    x, _, z = candidate.rotation.T
    half = candidate.width / 2 + gripper.finger_thickness / 2
    lines = []
    bases = []
    for side in (-1.0, 1.0):
        tip = candidate.position + side * half * x + z * gripper.finger_depth / 2
        base = candidate.position + side * half * x - z * gripper.finger_depth / 2
        lines.append(np.array([tip, base]))
        bases.append(base)
    wrist = (bases[0] + bases[1]) / 2 - z * gripper.palm_depth
    lines.append(np.array([bases[0], bases[1]]))
    lines.append(np.array([(bases[0] + bases[1]) / 2, wrist]))
    return lines


def save_candidates_picture(object_points: np.ndarray, scene_points: np.ndarray, plan: GraspPlan,
                            gripper: GripperSpec, path: Path, title: str = "") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    centre = object_points.mean(axis=0)
    around = scene_points[np.linalg.norm(scene_points[:, :2] - centre[:2], axis=1) < 0.15] if len(scene_points) else \
        scene_points
    figure = plt.figure(figsize=(10, 5))
    for index, (elevation, azimuth) in enumerate(((25, -60), (60, 30))):
        axes = figure.add_subplot(1, 2, index + 1, projection="3d")
        if len(around):
            axes.scatter(*around.T, s=1, c="tan", alpha=0.4)
        axes.scatter(*object_points.T, s=3, c="steelblue")
        for rank, candidate in reversed(list(enumerate(plan.candidates))):
            colour, width = ("green", 2.5) if rank == 0 else ("grey", 1.0)
            for line in hand_lines(candidate, gripper):
                axes.plot(*line.T, c=colour, lw=width)
        span = 0.12
        axes.set_xlim(centre[0] - span, centre[0] + span)
        axes.set_ylim(centre[1] - span, centre[1] + span)
        axes.set_zlim(max(centre[2] - span, -0.01), centre[2] + span)
        axes.view_init(elevation, azimuth)
        axes.set_xlabel("x")
        axes.set_ylabel("y")
        axes.set_zlabel("z")
    figure.suptitle(title or f"{len(plan.candidates)} grasp candidates (best in green) on the seen points")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)
    return path
