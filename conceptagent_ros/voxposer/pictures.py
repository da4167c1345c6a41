"""PNG pictures of a VoxPoser run: the value maps (top-down max projections) with the planned
path, and the executed end-effector trajectory over the table's objects."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from conceptagent_ros.voxposer.executor import RunReport


def save_pictures(report: RunReport, env: object, out: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    maps = report.last_maps
    if maps:
        kinds = [k for k in ("affordance", "avoidance", "velocity", "gripper") if k in maps]
        fig, axes = plt.subplots(1, len(kinds), figsize=(4 * len(kinds), 4), squeeze=False)
        for ax, kind in zip(axes[0], kinds):
            top = maps[kind].max(axis=2) if kind != "velocity" else maps[kind].min(axis=2)
            ax.imshow(top.T, origin="lower", cmap="viridis")
            ax.set_title(f"{kind} (top view)")
            ax.set_xlabel("x voxel (front +)")
            ax.set_ylabel("y voxel (right +)")
            for record in report.replans[:1] + report.replans[-1:]:
                ax.plot(record.path[:, 0], record.path[:, 1], "r-", lw=1)
        fig.suptitle(report.instruction)
        path = out / "value_maps.png"
        fig.savefig(path, dpi=90, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    trace = np.asarray(getattr(env, "ee_trace", []) or [])
    if len(trace):
        fig = plt.figure(figsize=(6, 5))
        ax = fig.add_subplot(projection="3d")
        ax.plot(trace[:, 0], trace[:, 1], trace[:, 2], "k-", lw=1.5, label="end effector")
        for name in getattr(env, "blocks", {}):
            pos = env.block_position(name)  # type: ignore[attr-defined]
            ax.scatter(*pos, s=60, color=name.split()[0] if name.split()[0] in _MPL else "gray", label=name)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.set_zlabel("z (m)")
        ax.set_title(("done: " if report.success else "FAILED: ") + report.instruction, fontsize=9)
        ax.legend(fontsize=7)
        path = out / "trajectory.png"
        fig.savefig(path, dpi=90, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    (out / "programs.txt").write_text("\n\n".join(report.programs) + "\n",
                                     encoding="utf-8")
    written.append(out / "programs.txt")
    return written


_MPL = {"blue", "green", "yellow", "pink", "brown", "red", "orange", "purple", "white", "black", "cyan", "gray"}
