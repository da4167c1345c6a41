"""The `conceptagent` command (entry point `conceptagent_ros.cli:main`; `python -m conceptagent_ros.cli`)."""
from conceptagent_ros.cli.common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from conceptagent_ros.cli.main import main

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_OK", "main"]
