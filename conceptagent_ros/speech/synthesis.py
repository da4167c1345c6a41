"""Spoken test commands from text: Debian's flite (CMU Flite, BSD-style licence) with its built-in
voices. For the speech benchmark and the tests; the robot itself never needs it.
`tools/ensure_flite.sh` installs it (`apt-get install flite`)."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from conceptagent_ros.speech.audio import SpeechError, read_wav

FLITE_VOICES = ("slt", "rms", "kal", "awb")  # US female, US male, US male (diphone), Scottish male


def flite_available() -> bool:
    return shutil.which("flite") is not None


def say_with_flite(text: str, voice: str = "slt") -> tuple[np.ndarray, int]:
    """Mono samples in [-1, 1] and their rate (16 kHz for slt/rms/awb, 8 kHz for kal)."""
    if voice not in FLITE_VOICES:
        raise SpeechError(f"unknown flite voice {voice!r}; the voices: {', '.join(FLITE_VOICES)}")
    if not flite_available():
        raise SpeechError("flite is not installed (apt-get install flite, or tools/ensure_flite.sh)")
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "say.wav"
        done = subprocess.run(["flite", "-voice", voice, "-t", text, "-o", str(wav)], capture_output=True,
                              text=True, timeout=60)
        if done.returncode != 0:
            raise SpeechError(f"flite failed ({done.returncode}): {done.stderr.strip()[:200]}")
        return read_wav(wav)
