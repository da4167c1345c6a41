"""The shipped Fast DDS profile (config/ros/fastdds_lossy_link.xml): every process of the graph
loads it unless the user chose a profile of their own or another middleware.

Fast DDS reads its default profile file once, when the process makes its first participant, so
this runs before rclpy.init (spin.run_node, spin.init_context). The file only tunes the reliable
protocol's timing (heartbeats every 50 ms instead of 3 s): without it a task on a link that loses
5 % of its packets took up to 8x as long (`conceptagent ros bench --loss 5`).
"""
from __future__ import annotations

import os
from pathlib import Path

from conceptagent_ros.paths import config_dir

PROFILE_NAME = "fastdds_lossy_link.xml"
# Fast DDS 2.x (ROS 2 Jazzy) reads the first, Fast DDS 3.x (Kilted and later) the second
PROFILE_VARIABLES = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")
OPT_OUT = "CONCEPTAGENT_DDS_PROFILE"  # set to "none" to keep Fast DDS's own defaults
FAST_DDS_RMWS = ("", "rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp")


def shipped_profile() -> Path:
    return config_dir() / "ros" / PROFILE_NAME


def use_shipped_profile(environ: os._Environ[str] | dict[str, str] = os.environ) -> Path | None:
    """Point Fast DDS at the shipped profile where nothing else was chosen; the path it set, or None."""
    if any(environ.get(name) for name in PROFILE_VARIABLES):
        return None  # the user's own profile wins
    if environ.get(OPT_OUT, "").lower() == "none":
        return None
    if environ.get("RMW_IMPLEMENTATION", "") not in FAST_DDS_RMWS:
        return None  # Cyclone DDS, Zenoh, ...: their own configuration
    profile = shipped_profile()
    if not profile.is_file():
        return None
    for name in PROFILE_VARIABLES:
        environ[name] = str(profile)
    return profile
