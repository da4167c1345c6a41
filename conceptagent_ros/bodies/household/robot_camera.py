"""The robot's own RGB-D camera in PyBullet: the description's mast camera (camera_link, on a head
that tilts: pitched down at the workspace at 0, up to see the tops of shelves; 1.05 rad across, as
its Gazebo sensor says), rendered where the link is now,
with the simulator's segmentation masks naming the model each pixel shows. What comes out is what
a depth camera gives: per pixel a world point back-projected from depth, and per seen model the
points its mask covers (segmentation from the simulator, geometry from depth); and, for a perception
node, each image as the RGB-D frame a camera driver publishes (`perceived_frame`)."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from conceptagent_ros.bodies.household.mobile_arm import link_index
from conceptagent_ros.perception.depth_noise import DepthNoise, optical_points, still_frames
from conceptagent_ros.perception.frames import Frame, Intrinsics
from conceptagent_ros.perception.pybullet_capture import capture, matrix

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
    world_T_optical: np.ndarray  # 4 x 4: where the lens was, optical frame (x right, y down, z forward)


class RobotCamera:
    """`noise`: what the depth image goes through before anything sees it (perception/depth_noise),
    drawn from `rng`; None: the depth as rendered."""

    def __init__(self, p: Any, client: int, robot: int, width: int = 320, height: int = 240,
                 noise: DepthNoise | None = None, rng: np.random.Generator | None = None):
        self.p, self.client, self.robot = p, client, robot
        self.noise, self.rng = noise, rng if rng is not None else np.random.default_rng(0)
        # the simulator's world to the frame the robot believes in (PyBulletBase.believed_from_true):
        # the lens's pose and every point are given in that frame, as a robot's are in its map's
        self.believed_from_true: Callable[[], np.ndarray] = lambda: np.eye(4)
        self.width, self.height = width, height
        self.link = link_index(p, robot, client, "camera_link")
        aspect = width / height
        vertical = 2 * math.degrees(math.atan(math.tan(HORIZONTAL_FOV / 2) / aspect))
        self.projection = matrix(p.computeProjectionMatrixFOV(vertical, aspect, NEAR, FAR))

    def tilt(self, angle: float) -> None:
        """Tilt the head to `angle` (radians; 0 looks down at the workspace, negative further up)
        and hold it there. The head is light and quick: it is put there, not driven."""
        p = self.p
        p.resetJointState(self.robot, self.link, angle, physicsClientId=self.client)
        p.setJointMotorControl2(self.robot, self.link, p.POSITION_CONTROL, angle, force=TILT_FORCE,
                                physicsClientId=self.client)

    def intrinsics(self) -> Intrinsics:
        """The pinhole PyBullet's projection is (square pixels, centred)."""
        return Intrinsics.from_fov(self.width, self.height, math.degrees(HORIZONTAL_FOV))

    def _true_pose(self) -> tuple[np.ndarray, np.ndarray]:
        state = self.p.getLinkState(self.robot, self.link, computeForwardKinematics=True, physicsClientId=self.client)
        return np.asarray(state[4]), Rotation.from_quat(state[5]).as_matrix()

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        """camera_link's position and rotation matrix (x forward, z up), where the robot believes it."""
        eye, rotation = self._true_pose()
        correction = self.believed_from_true()
        return correction[:3, :3] @ eye + correction[:3, 3], correction[:3, :3] @ rotation

    def capture(self) -> CameraImage:
        """One image, rendered where the lens truly is; its points and the lens's pose in the frame
        the robot believes in."""
        p = self.p
        eye, rotation = self._true_pose()
        forward, up = rotation[:, 0], rotation[:, 2]
        view = matrix(p.computeViewMatrix(eye.tolist(), (eye + forward).tolist(), up.tolist()))
        shot = capture(p, self.client, view, self.projection, self.width, self.height)
        world = shot.points  # this image's own array
        world[shot.at_far_clip()] = np.nan
        depth = FAR * NEAR / (FAR - (FAR - NEAR) * shot.buffer)
        optical = np.eye(4)
        # camera_link looks along x with z up; the optical frame looks along z with y down
        optical[:3, 0], optical[:3, 1], optical[:3, 2], optical[:3, 3] = -rotation[:, 1], -rotation[:, 2], forward, eye
        correction = self.believed_from_true()
        moved = not np.array_equal(correction, np.eye(4))
        if moved:
            optical = correction @ optical
        if self.noise is not None:  # the points then come from the depth as the camera returns it
            rendered = np.where(np.isfinite(world).all(axis=-1), depth, np.nan)
            depth = still_frames(self.noise, rendered, self.intrinsics(), self.rng)
            world = optical_points(depth, self.intrinsics()) @ optical[:3, :3].T + optical[:3, 3]
        elif moved:
            world = world @ correction[:3, :3].T + correction[:3, 3]
        return CameraImage(shot.rgb, world, shot.bodies, shot.links, depth, optical)


def perceived_frame(image: CameraImage, intrinsics: Intrinsics, instances: np.ndarray,
                    names: tuple[str, ...]) -> Frame:
    """The image as a camera driver and a simulator's segmentation camera give it to a perception
    node: colour, depth in metres along the optical axis (NaN where nothing was hit), the lens's pose,
    and per pixel the index into `names` of the thing it shows (-1 for none). Unstamped."""
    depth = np.where(np.isfinite(image.points).all(axis=-1), image.depth, np.nan).astype(np.float32)
    return Frame(np.ascontiguousarray(image.rgb), depth, intrinsics, image.world_T_optical,
                 instance_ids=instances.astype(np.int32), instance_names=names)
