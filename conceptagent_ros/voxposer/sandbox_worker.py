"""The sandbox worker process: `python -m conceptagent_ros.voxposer.sandbox_worker FD RUNNER MEMORY_BYTES`.

A module of its own so that the sandbox's classes keep one identity in the worker (running
sandbox.py itself as __main__ would define a second SandboxError)."""
import sys
from multiprocessing.connection import Connection

from conceptagent_ros.voxposer.sandbox import _worker_main

if __name__ == "__main__":
    _worker_main(Connection(int(sys.argv[1])), sys.argv[2], int(sys.argv[3]))
