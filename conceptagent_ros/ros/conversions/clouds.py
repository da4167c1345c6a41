"""Points <-> sensor_msgs/PointCloud2, in one piece (no per-point Python loop): any NumPy
structured array of float32 fields out, x / y / z back in from any producer's layout (offsets
and point_step as its fields say, NaN points dropped)."""
from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from sensor_msgs.msg import PointCloud2, PointField

XYZ_DTYPE = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4")])


def structured_cloud(cloud: np.ndarray, frame: str, stamp: Time) -> PointCloud2:
    """A PointCloud2 of a structured array whose fields are all little-endian float32."""
    msg = PointCloud2()
    msg.header.frame_id, msg.header.stamp = frame, stamp
    msg.height, msg.width = 1, len(cloud)
    msg.fields = [PointField(name=name, offset=int(cloud.dtype.fields[name][1]), datatype=PointField.FLOAT32, count=1)
                  for name in cloud.dtype.names or ()]
    msg.is_bigendian = False
    msg.point_step = cloud.dtype.itemsize
    msg.row_step = cloud.dtype.itemsize * len(cloud)
    msg.is_dense = True
    msg.data = cloud.tobytes()
    return msg


def xyz_cloud(points: np.ndarray, frame: str, stamp: Time) -> PointCloud2:
    """(N, 3) points as a PointCloud2 of x, y, z float32."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    cloud = np.empty(len(points), dtype=XYZ_DTYPE)
    cloud["x"], cloud["y"], cloud["z"] = points[:, 0], points[:, 1], points[:, 2]
    return structured_cloud(cloud, frame, stamp)


def cloud_xyz(msg: PointCloud2) -> np.ndarray:
    """(N, 3) float points of a cloud with float32 x, y, z fields, whatever else it carries; points
    with a NaN coordinate (no depth there) are left out."""
    offsets = {f.name: f.offset for f in msg.fields if f.datatype == PointField.FLOAT32}
    missing = [axis for axis in "xyz" if axis not in offsets]
    if missing:
        raise ValueError(f"the cloud has no float32 {', '.join(missing)} field(s); fields: "
                         f"{', '.join(f.name for f in msg.fields) or 'none'}")
    order = ">" if msg.is_bigendian else "<"
    layout = np.dtype({"names": ["x", "y", "z"], "formats": [f"{order}f4"] * 3,
                       "offsets": [offsets["x"], offsets["y"], offsets["z"]], "itemsize": msg.point_step})
    count = msg.width * msg.height
    cloud = np.frombuffer(bytes(msg.data), dtype=layout, count=count)
    points = np.stack([cloud["x"], cloud["y"], cloud["z"]], axis=1).astype(float)
    return points[np.isfinite(points).all(axis=1)]
