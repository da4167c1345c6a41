"""The local model's server process: llama-cpp-python's own server, which exits once the process
that started it is gone, however that one ended (SIGKILL and SIGTERM skip atexit, and Linux's
parent-death signal follows the starting thread, not the process)."""
from __future__ import annotations

import os
import runpy
import sys
import threading
import time


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _count_what_the_cache_holds() -> None:
    """The server's RAM prompt cache (--cache) bounded by every byte it holds (llm/prompt_cache.py)."""
    import llama_cpp

    from conceptagent_ros.llm.prompt_cache import CountingRAMCache

    llama_cpp.LlamaRAMCache = CountingRAMCache  # what llama_cpp.server.model builds the cache from


def main() -> None:
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    if "--cache" in sys.argv:
        _count_what_the_cache_holds()
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
