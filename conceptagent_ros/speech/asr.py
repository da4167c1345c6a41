"""Speech to text for spoken commands: a transformers automatic-speech-recognition pipeline
(Whisper), WAV reading and resampling without ffmpeg. No ROS here; ros/speech_node.py wraps it.

Models load from a local folder or the Hugging Face cache only (`local_files_only`): nothing is
downloaded behind the user's back. Fetch a model once with
`huggingface-cli download openai/whisper-base.en` (or save one with `save_pretrained`).
"""
from __future__ import annotations

import wave
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from conceptagent_ros.errors import ConceptAgentError

WHISPER_RATE = 16000
MAX_SECONDS = 60.0  # one command; longer audio is refused rather than transcribed for minutes


class SpeechError(ConceptAgentError):
    """Audio that cannot be read or transcribed, or an ASR model that cannot be loaded."""


class Transcriber(Protocol):
    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str: ...


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    """Mono float32 samples in [-1, 1] and the sample rate of a PCM WAV file."""
    try:
        with wave.open(str(path), "rb") as f:
            width, channels, rate = f.getsampwidth(), f.getnchannels(), f.getframerate()
            raw = f.readframes(f.getnframes())
    except (OSError, EOFError, wave.Error) as e:
        raise SpeechError(f"{path}: not a readable PCM WAV file ({e})") from e
    if width == 1:
        samples = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        samples = np.frombuffer(raw, "<i2").astype(np.float32) / 32768.0
    elif width == 4:
        samples = np.frombuffer(raw, "<i4").astype(np.float32) / 2147483648.0
    else:
        raise SpeechError(f"{path}: {8 * width}-bit WAV is not supported; use 8, 16 or 32-bit PCM")
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return samples, rate


def prepare_audio(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    """Finite mono float32 at Whisper's 16 kHz, or SpeechError saying what is wrong."""
    audio = np.asarray(samples, dtype=np.float32).reshape(-1)
    if sample_rate <= 0:
        raise SpeechError(f"sample rate {sample_rate} Hz is not valid")
    if audio.size == 0:
        raise SpeechError("the audio is empty")
    if audio.size / sample_rate > MAX_SECONDS:
        raise SpeechError(f"the audio is {audio.size / sample_rate:.0f} s long; one command may take {MAX_SECONDS:.0f} s")
    if not np.all(np.isfinite(audio)):
        raise SpeechError("the audio contains NaN or infinite samples")
    if sample_rate != WHISPER_RATE:  # linear interpolation: plenty for speech recognition
        n = max(1, int(round(audio.size * WHISPER_RATE / sample_rate)))
        audio = np.interp(np.linspace(0, audio.size - 1, n), np.arange(audio.size), audio).astype(np.float32)
    return np.clip(audio, -1.0, 1.0)


class WhisperTranscriber:
    """A transformers ASR pipeline; `model` is a local folder or a cached hub id."""

    def __init__(self, model: str, device: str = "cpu", local_files_only: bool = True):
        try:
            from transformers import AutoModelForSpeechSeq2Seq, AutoProcessor, pipeline
        except ImportError as e:
            raise SpeechError("speech needs transformers and torch: pip install -c constraints.txt -e '.[speech]'") from e
        try:  # loaded here, so that local_files_only reaches from_pretrained and nothing is downloaded
            processor = AutoProcessor.from_pretrained(model, local_files_only=local_files_only)
            network = AutoModelForSpeechSeq2Seq.from_pretrained(model, local_files_only=local_files_only)
        except (OSError, ValueError) as e:
            raise SpeechError(f"cannot load the ASR model {model!r} ({str(e).splitlines()[0]}); fetch it first, e.g. "
                              f"huggingface-cli download {model}, or give a local folder") from e
        self._pipe: Any = pipeline("automatic-speech-recognition", model=network, tokenizer=processor.tokenizer,
                                   feature_extractor=processor.feature_extractor, device=device)

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        prepared = prepare_audio(audio, sample_rate)
        out = self._pipe({"raw": prepared, "sampling_rate": WHISPER_RATE})
        return " ".join(str(out.get("text", "")).split())
