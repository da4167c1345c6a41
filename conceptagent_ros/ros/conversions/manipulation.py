"""rviz markers of a grasp plan: each candidate as a thin grey arrow along its approach, ending at
the grasp centre, and the one the hand took as a thick green arrow with its fingers' closing line."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from conceptagent_ros.manipulation.grasp_planner import GraspCandidate

CANDIDATE = ColorRGBA(r=0.7, g=0.7, b=0.7, a=0.6)
CHOSEN = ColorRGBA(r=0.2, g=0.9, b=0.3, a=1.0)
SHOWN = 30  # candidates drawn at most (best first)
ARROW = 0.08  # metres of approach drawn before the grasp centre


def _point(v: np.ndarray) -> Point:
    return Point(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def _arrow(ns: str, mid: int, grasp: GraspCandidate, stamp: Time, frame: str, color: ColorRGBA,
           shaft: float) -> Marker:
    m = Marker()
    m.header.stamp, m.header.frame_id = stamp, frame
    m.ns, m.id, m.type, m.action = ns, mid, Marker.ARROW, Marker.ADD
    m.color, m.lifetime = color, Duration(sec=0)
    m.pose.orientation.w = 1.0
    m.points = [_point(grasp.pre_grasp(ARROW)), _point(grasp.position)]
    m.scale.x, m.scale.y, m.scale.z = shaft, shaft * 2.5, shaft * 3.0
    return m


def grasp_markers(candidates: Sequence[GraspCandidate], chosen: GraspCandidate | None, stamp: Time,
                  frame: str) -> MarkerArray:
    """One DELETEALL first: the last plan's arrows go."""
    clear = Marker()
    clear.header.stamp, clear.header.frame_id = stamp, frame
    clear.action = Marker.DELETEALL
    markers = [clear]
    for i, grasp in enumerate(candidates[:SHOWN]):
        markers.append(_arrow("grasp_candidates", i, grasp, stamp, frame, CANDIDATE, 0.003))
    if chosen is not None:
        markers.append(_arrow("grasp_chosen", 0, chosen, stamp, frame, CHOSEN, 0.008))
        fingers = Marker()
        fingers.header.stamp, fingers.header.frame_id = stamp, frame
        fingers.ns, fingers.id, fingers.type, fingers.action = "grasp_fingers", 0, Marker.LINE_LIST, Marker.ADD
        fingers.color, fingers.scale.x = CHOSEN, 0.004
        fingers.pose.orientation.w = 1.0
        half = chosen.rotation[:, 0] * max(chosen.width, 0.01) / 2
        fingers.points = [_point(chosen.position - half), _point(chosen.position + half)]
        markers.append(fingers)
    return MarkerArray(markers=markers)
