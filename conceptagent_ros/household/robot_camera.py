"""The robot's own RGB-D camera in PyBullet: the description's mast camera (camera_link, on a head
that tilts: pitched down at the workspace at 0, up to see the tops of shelves; 1.05 rad across, as
its Gazebo sensor says), rendered where the link is now,
with the simulator's segmentation masks naming the model each pixel shows. What comes out is what
a depth camera gives: per pixel a world point back-projected from depth, and per seen model the
points its mask covers (segmentation from the simulator, geometry from depth)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.household.mobile_arm import link_index

HORIZONTAL_FOV = 1.05  # radians, the description's gz camera
TILT_FORCE = 5.0  # newton-metres, the description's effort limit
NEAR, FAR = 0.1, 10.0


@dataclass
class CameraImage:
    rgb: np.ndarray  # (H, W, 3) uint8
    points: np.ndarray  # (H, W, 3) world points; NaN where the depth is at the far clip (nothing seen)
    bodies: np.ndarray  # (H, W) PyBullet body id per pixel, -1 for none
    links: np.ndarray  # (H, W) link index per pixel (-1: the base link)
    depth: np.ndarray  # (H, W) metres along the optical axis


class RobotCamera:
    def __init__(self, p: Any, client: int, robot: int, width: int = 320, height: int = 240):
        self.p, self.client, self.robot = p, client, robot
        self.width, self.height = width, height
        self.link = link_index(p, robot, client, "camera_link")
        aspect = width / height
        vertical = 2 * math.degrees(math.atan(math.tan(HORIZONTAL_FOV / 2) / aspect))
        self.projection = np.asarray(p.computeProjectionMatrixFOV(vertical, aspect, NEAR, FAR),
                                     dtype=float).reshape(4, 4, order="F")

    def tilt(self, angle: float) -> None:
        """Tilt the head to `angle` (radians; 0 looks down at the workspace, negative further up)
        and hold it there. The head is light and quick: it is put there, not driven."""
        p = self.p
        p.resetJointState(self.robot, self.link, angle, physicsClientId=self.client)
        p.setJointMotorControl2(self.robot, self.link, p.POSITION_CONTROL, angle, force=TILT_FORCE,
                                physicsClientId=self.client)

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        """camera_link's position and rotation matrix (x forward, z up) in the world."""
        state = self.p.getLinkState(self.robot, self.link, computeForwardKinematics=True, physicsClientId=self.client)
        return np.asarray(state[4]), Rotation.from_quat(state[5]).as_matrix()

    def capture(self) -> CameraImage:
        p = self.p
        eye, rotation = self.pose()
        forward, up = rotation[:, 0], rotation[:, 2]
        view = np.asarray(p.computeViewMatrix(eye.tolist(), (eye + forward).tolist(), up.tolist()),
                          dtype=float).reshape(4, 4, order="F")
        _, _, rgba, buffer, seg = p.getCameraImage(
            self.width, self.height, view.flatten(order="F").tolist(), self.projection.flatten(order="F").tolist(),
            renderer=p.ER_TINY_RENDERER, flags=p.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX,
            physicsClientId=self.client)
        rgba = np.asarray(rgba, dtype=np.uint8).reshape(self.height, self.width, 4)
        buffer = np.asarray(buffer, dtype=float).reshape(self.height, self.width)
        seg = np.asarray(seg, dtype=np.int64).reshape(self.height, self.width)
        # back-project every pixel through the inverse of projection * view
        u = (np.arange(self.width) + 0.5) / self.width * 2 - 1
        v = 1 - (np.arange(self.height) + 0.5) / self.height * 2
        uu, vv = np.meshgrid(u, v)
        ndc = np.stack([uu, vv, 2 * buffer - 1, np.ones_like(buffer)], axis=-1).reshape(-1, 4)
        world = ndc @ np.linalg.inv(self.projection @ view).T
        world = (world[:, :3] / world[:, 3:]).reshape(self.height, self.width, 3)
        depth = FAR * NEAR / (FAR - (FAR - NEAR) * buffer)
        world[buffer >= 1.0 - 1e-7] = np.nan
        bodies = np.where(seg >= 0, seg & ((1 << 24) - 1), -1)
        links = np.where(seg >= 0, (seg >> 24) - 1, -2)
        return CameraImage(rgba[..., :3], world, bodies, links, depth)

    def clouds(self, image: CameraImage, names: dict[int, str]) -> dict[str, np.ndarray]:
        """Per named body the camera sees (the robot itself left out), the points its pixels cover."""
        out: dict[str, np.ndarray] = {}
        valid = np.isfinite(image.points).all(axis=-1)
        for body in np.unique(image.bodies[valid]):
            name = names.get(int(body))
            if name is None or int(body) == self.robot:
                continue
            out[name] = image.points[(image.bodies == body) & valid]
        return out
