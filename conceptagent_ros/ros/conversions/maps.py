"""nav_msgs/OccupancyGrid (what Nav2's map_server publishes) as the navigator's OccupancyMap."""
from __future__ import annotations

import math

import numpy as np
from nav_msgs.msg import OccupancyGrid

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.world.occupancy_map import OccupancyMap

OCCUPIED_FROM = 65  # map_server's default occupied_thresh (0.65) on the message's 0-100 scale


def occupancy_from_msg(msg: OccupancyGrid) -> OccupancyMap:
    """Occupied where the cell is at least OCCUPIED_FROM or unknown (-1): the base is not sent where
    the map has not seen. A rotated map origin is refused (map_server writes none)."""
    info = msg.info
    q = info.origin.orientation
    if abs(2 * (q.w * q.z + q.x * q.y)) > 1e-6 or abs(q.x) + abs(q.y) > 1e-6:
        raise ConceptAgentError("the occupancy grid's origin is rotated; only axis-aligned maps are supported")
    if info.width * info.height != len(msg.data) or not math.isfinite(info.resolution) or info.resolution <= 0:
        raise ConceptAgentError(f"malformed occupancy grid: {info.width}x{info.height} cells of "
                                f"{info.resolution} m, {len(msg.data)} values")
    cells = np.asarray(msg.data, dtype=np.int16).reshape(info.height, info.width)
    return OccupancyMap((cells >= OCCUPIED_FROM) | (cells < 0), float(info.resolution),
                        (float(info.origin.position.x), float(info.origin.position.y)))
