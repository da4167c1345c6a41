"""A picture of an exported world as PyBullet renders it (its CPU renderer, no display): the
house from above at a slant, so walls, doorways and furniture read at a glance."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from conceptagent_ros.world.pybullet_world import load_world


def render_world(sdf: Path, png: Path, width: int = 1200, height: int = 900) -> Path:
    import pybullet as p
    from PIL import Image

    client = p.connect(p.DIRECT)
    try:
        bodies = load_world(p, sdf, client)
        lows, highs = [], []
        for body in bodies.values():
            for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
                low, high = p.getAABB(body, link, physicsClientId=client)
                if high[2] - low[2] < 50:  # the ground plane's box is as big as it says
                    lows.append(low)
                    highs.append(high)
        low, high = np.min(lows, axis=0), np.max(highs, axis=0)
        centre = (low + high) / 2
        span = float(max(high[0] - low[0], high[1] - low[1]))
        target = [float(centre[0]), float(centre[1]), 0.0]
        eye = [float(centre[0]), float(centre[1]) - 0.55 * span, 1.25 * span]
        view = p.computeViewMatrix(eye, target, [0, 1, 0], physicsClientId=client)
        projection = p.computeProjectionMatrixFOV(45, width / height, 0.1, 5 * span, physicsClientId=client)
        _, _, rgba, _, _ = p.getCameraImage(width, height, view, projection, renderer=p.ER_TINY_RENDERER,
                                            lightDirection=[0.4, -0.6, 1.0], shadow=0, physicsClientId=client)
        image = np.reshape(np.asarray(rgba, dtype=np.uint8), (height, width, 4))[:, :, :3]
        png.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(png)
        return png
    finally:
        p.disconnect(client)
