"""`--llm local[:NAME]`: a fetched GGUF model served on CPU by llama.cpp, started and stopped here.

The project starts llama-cpp-python's OpenAI-compatible server (`llama_cpp.server`, in a process
that ends itself once its parent is gone: llm/llama_server_process.py) on a free port of
127.0.0.1, waits until it answers `/v1/models`, and talks to it through the same
`openai` backend as any other server, so every planner and every backend option works with it
(JSON-schema `response_format`, `/v1/completions` log-probabilities for Grounded Decoding). One
server per model per process, stopped when the process exits. The server keeps the key-value cache
of its last prompt, which is why prompts put their unchanging part first (planning/prompts.py), and
with CONCEPTAGENT_LOCAL_CACHE_MB the states of recent prompts too (llm/prompt_cache.py).
"""
from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from conceptagent_ros.errors import LLMError
from conceptagent_ros.models.catalogue import DEFAULTS
from conceptagent_ros.models.store import fetched_path, lookup, models_dir

log = logging.getLogger(__name__)
RUNTIME_HINT = ("--llm local needs llama-cpp-python's server: `make local-llm`, or "
                "pip install 'llama-cpp-python[server]==0.3.36' (builds from source, about 4 minutes on 2 cores)")


@dataclass(frozen=True)
class ServerSettings:
    context: int = 4096  # tokens; the longest planner prompt is under 2,000
    threads: int = 0  # 0: every core this process may use
    startup_timeout: float = 300.0  # seconds to load the model and answer
    # MiB of RAM for recent prompts' states (llm/prompt_cache.py); 0: only the last prompt's
    # key-value cache, as llama.cpp keeps anyway
    cache_mb: int = 0

    @classmethod
    def from_env(cls) -> ServerSettings:
        return cls(context=int(os.environ.get("CONCEPTAGENT_LOCAL_CTX", "4096")),
                   threads=int(os.environ.get("CONCEPTAGENT_LOCAL_THREADS", "0")),
                   startup_timeout=float(os.environ.get("CONCEPTAGENT_LOCAL_STARTUP", "300")),
                   cache_mb=int(os.environ.get("CONCEPTAGENT_LOCAL_CACHE_MB", "0")))


def runtime_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def local_model_name(text: str) -> str:
    """`local` -> the default model; `local:0.5b` -> the one catalogue name that contains `0.5b`."""
    return lookup(text or DEFAULTS["llm"]).name


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalLlamaServer:
    """One llama.cpp server process for one model; `start` returns once it answers."""

    def __init__(self, model: str, settings: ServerSettings | None = None, log_dir: Path | None = None):
        self.model = local_model_name(model)
        self.settings = settings or ServerSettings()
        self.log_path = (log_dir or models_dir() / "logs") / f"llama-server-{self.model}.log"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self, model_path: Path) -> list[str]:
        threads = self.settings.threads or len(os.sched_getaffinity(0))
        return [sys.executable, "-m", "conceptagent_ros.llm.llama_server_process", "--model", str(model_path),
                "--model_alias", self.model,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.settings.context),
                "--n_threads", str(threads), "--n_threads_batch", str(threads), "--verbose", "False",
                *(["--cache", "True", "--cache_type", "ram", "--cache_size", str(self.settings.cache_mb << 20)]
                  if self.settings.cache_mb > 0 else [])]

    def start(self) -> LocalLlamaServer:
        if self.running:
            return self
        if not runtime_available():
            raise LLMError(RUNTIME_HINT)
        model_path = fetched_path(self.model)  # a one-line error naming `models fetch` when missing
        self.port = free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        print(f"[local llm] starting llama.cpp on 127.0.0.1:{self.port} with {self.model} "
              f"(log: {self.log_path})", file=sys.stderr, flush=True)
        started = time.perf_counter()
        with open(self.log_path, "wb") as log_file:
            self.process = subprocess.Popen(self.command(model_path), stdout=log_file, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            self._wait_ready(started)
        except BaseException:
            self.stop()
            raise
        print(f"[local llm] ready in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        return self

    def _wait_ready(self, started: float) -> None:
        assert self.process is not None
        while time.perf_counter() - started < self.settings.startup_timeout:
            if self.process.poll() is not None:
                raise LLMError(f"the llama.cpp server ended while starting ({exit_reason(self.process.returncode)}): "
                               f"{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2.0) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        raise LLMError(f"the llama.cpp server did not answer within {self.settings.startup_timeout:.0f} s "
                       f"(CONCEPTAGENT_LOCAL_STARTUP): {self.log_tail()}")

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:]) or "(empty log)"

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


REBUILD_HINT = ("llama.cpp built for this CPU's every extension crashes so on some (AVX-512 with AMX): "
                "rebuild it portable with `CMAKE_ARGS=-DGGML_NATIVE=OFF pip install --force-reinstall "
                "--no-cache-dir --no-deps llama-cpp-python==0.3.36` (make local-llm builds it so)")


def exit_reason(returncode: int | None) -> str:
    """How a server process ended, in words; a crash in llama.cpp's native code says how to rebuild it."""
    if returncode is None or returncode >= 0:
        return f"exit code {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    if -returncode in (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS):
        return f"it crashed ({name}): {REBUILD_HINT}"
    return f"it was stopped by {name}"


_SERVERS: dict[str, LocalLlamaServer] = {}
_LOCK = threading.Lock()


def shared_server(model: str) -> LocalLlamaServer:
    """The process's server for `model`, started on first use (a crashed one is started again) and
    stopped at exit."""
    name = local_model_name(model)
    with _LOCK:
        server = _SERVERS.get(name)
        if server is None:
            server = _SERVERS[name] = LocalLlamaServer(name, ServerSettings.from_env())
        if not server.running:
            if server.process is not None:
                log.warning("the llama.cpp server for %s stopped (%s; %s); starting it again", name,
                            exit_reason(server.process.returncode), server.log_tail(2))
            server.start()
        return server


def stop_all() -> None:
    with _LOCK:
        for server in _SERVERS.values():
            server.stop()
        _SERVERS.clear()


atexit.register(stop_all)
