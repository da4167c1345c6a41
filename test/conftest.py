from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_openai_server import ScriptedChatServer  # noqa: E402


@pytest.fixture
def chat_server():
    """Start a scripted chat-completions server; call it with the script."""
    servers: list[ScriptedChatServer] = []

    def start(script: list, next_token_logprobs=None, rejects: tuple[str, ...] = ()) -> ScriptedChatServer:
        server = ScriptedChatServer(script, next_token_logprobs, rejects).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONCEPTAGENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def ros_context():
    """A fresh rclpy context on a DDS domain id reserved for this test and not used by the tests before it (ros/domains.py)."""
    from ros_helpers import require_ros, shut_down

    require_ros()
    import rclpy
    from rclpy.context import Context

    from conceptagent_ros.ros.domains import reserved_domain

    with reserved_domain() as reserved:
        context = Context()
        rclpy.init(context=context, domain_id=reserved)
        try:
            yield context
        finally:
            shut_down(context)  # what the test left in reference cycles is collected first


@pytest.fixture(autouse=True)
def _no_executor_died_silently():
    """A test in which a spin thread died fails, whatever it asserted (ros/spin_threads.py); the
    record is cleared so that the next test is judged on its own."""
    yield
    spin_threads = sys.modules.get("conceptagent_ros.ros.spin_threads")
    if spin_threads is None:  # nothing of ROS was imported by the tests so far
        return
    try:
        spin_threads.raise_if_dead()
    finally:
        spin_threads.forget_dead()
