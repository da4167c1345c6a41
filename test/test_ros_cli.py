"""The pip path's shell commands across real processes: `conceptagent ros up` in one, `ros send`
and `say` in others, over DDS on a reserved domain."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from ros_helpers import interrupt, require_ros

require_ros()


@pytest.fixture
def ros_up():
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as reserved:
        env = dict(os.environ, ROS_DOMAIN_ID=str(reserved), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        graph = subprocess.Popen([sys.executable, "-m", "conceptagent_ros.cli", "ros", "up", "--scene", "studio_kitchen"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            yield env
        finally:
            out, _ended = interrupt(graph, 15)
            assert graph.returncode == 0, out[-2000:]  # Ctrl-C is a clean shutdown
            assert "Traceback" not in out


def cli(env, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_send_and_say_against_a_running_graph(ros_up):
    sent = cli(ros_up, "ros", "send", "open the fridge")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert "[step  1] ok  navigate_to(fridge_1)" in sent.stdout and "SUCCESS" in sent.stdout
    said = cli(ros_up, "say", "put", "the", "apple", "in", "the", "fridge", "--wait", "15")
    assert said.returncode == 0, said.stderr
    assert "published on /conceptagent/command (1 subscriber)" in said.stdout
    bad = cli(ros_up, "ros", "send", "\x1b[2J\x07\t")  # control characters only (argv cannot hold NUL)
    assert bad.returncode == 2 and "FAILED" in bad.stdout
    assert "\x1b" not in bad.stdout and "\x07" not in bad.stdout  # nothing hostile echoed to the terminal


def test_commands_without_a_graph_fail_cleanly():
    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as reserved:
        env = dict(os.environ, ROS_DOMAIN_ID=str(reserved), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        said = cli(env, "say", "hello", "--wait", "0.5")
        assert said.returncode == 1 and "nothing subscribes" in said.stderr
        empty = cli(env, "say", "   ")
        assert empty.returncode == 2 and "say what the robot should do" in empty.stderr
        up = cli(env, "ros", "up", "--params", "/no/such/file.yaml")
        assert up.returncode == 2 and "no such file" in up.stderr
