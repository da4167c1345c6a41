"""How the local model's server ended, in words: a crash in llama.cpp's native code names the fix."""
from __future__ import annotations

import signal
import subprocess
import sys

from conceptagent_ros.llm.local_server import exit_reason


def test_a_server_that_crashed_says_how_to_rebuild_llama_cpp() -> None:
    crashed = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    reason = exit_reason(crashed.returncode)
    assert "SIGSEGV" in reason and "GGML_NATIVE=OFF" in reason


def test_a_server_stopped_or_exited_is_not_called_a_crash() -> None:
    assert exit_reason(-int(signal.SIGTERM)) == "it was stopped by SIGTERM"
    assert exit_reason(1) == "exit code 1"
    assert "GGML_NATIVE" not in exit_reason(0)
