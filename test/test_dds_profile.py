"""The shipped Fast DDS profile: what `ros up` and every node load unless told otherwise, and that
Fast DDS itself accepts the file (a bad profile is only a log line, so a typo would go unnoticed)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conceptagent_ros.ros.dds_profile import OPT_OUT, PROFILE_VARIABLES, shipped_profile, use_shipped_profile


def test_the_shipped_profile_is_set_for_both_fast_dds_generations() -> None:
    environ: dict[str, str] = {}
    assert use_shipped_profile(environ) == shipped_profile()
    assert all(environ[name] == str(shipped_profile()) for name in PROFILE_VARIABLES)


@pytest.mark.parametrize("environ", [{"FASTRTPS_DEFAULT_PROFILES_FILE": "/mine.xml"},
                                     {"FASTDDS_DEFAULT_PROFILES_FILE": "/mine.xml"},
                                     {OPT_OUT: "none"},
                                     {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}])
def test_a_users_own_choice_is_left_alone(environ: dict[str, str]) -> None:
    before = dict(environ)
    assert use_shipped_profile(environ) is None
    assert environ == before


def _probe(profile: Path) -> subprocess.CompletedProcess[str]:
    """A process that makes one node with `profile` as Fast DDS's default profile file."""
    probe = ("import rclpy\n"
             "rclpy.init()\n"
             "node = rclpy.create_node('profile_probe')\n"
             "node.destroy_node()\n"
             "rclpy.shutdown()\n")
    env = dict(os.environ, FASTRTPS_DEFAULT_PROFILES_FILE=str(profile), FASTDDS_DEFAULT_PROFILES_FILE=str(profile),
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)


def test_fast_dds_parses_the_shipped_profile(tmp_path: Path) -> None:
    pytest.importorskip("rclpy")
    done = _probe(shipped_profile())
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "XMLPARSER" not in said, said  # Fast DDS's log is the only place a bad file shows
    # the judge can tell: a copy with a misspelt element is reported
    broken = tmp_path / "broken.xml"
    broken.write_text(shipped_profile().read_text().replace("heartbeatPeriod>", "heartbeatPeriodTypo>"))
    done = _probe(broken)
    assert "XMLPARSER" in done.stdout + done.stderr
