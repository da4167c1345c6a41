"""Audio as the speech layer takes it: PCM WAV in and out without ffmpeg, checked and resampled to
Whisper's 16 kHz, and noise mixed in at a stated signal-to-noise ratio (for the speech benchmark)."""
from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from conceptagent_ros.errors import ConceptAgentError

WHISPER_RATE = 16000
MAX_SECONDS = 60.0  # one command; longer audio is refused rather than transcribed for minutes


class SpeechError(ConceptAgentError):
    """Audio that cannot be read or transcribed, or an ASR model that cannot be loaded."""


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


def write_wav(path: str | Path, samples: np.ndarray, rate: int) -> None:
    """Mono 16-bit PCM."""
    pcm = (np.clip(np.asarray(samples, np.float32), -1.0, 1.0) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(rate)
        f.writeframes(pcm.tobytes())


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
    return np.clip(resample(audio, sample_rate, WHISPER_RATE), -1.0, 1.0)


def resample(audio: np.ndarray, rate: int, to_rate: int) -> np.ndarray:
    """Linear interpolation: plenty for speech recognition."""
    if rate == to_rate:
        return audio.astype(np.float32)
    n = max(1, int(round(audio.size * to_rate / rate)))
    return np.interp(np.linspace(0, audio.size - 1, n), np.arange(audio.size), audio).astype(np.float32)


def mix_at_snr(speech: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """Speech with noise added so that speech power / noise power is `snr_db` (the noise tiled or
    cut to the speech's length; power measured over the whole clip)."""
    speech = np.asarray(speech, np.float32)
    noise = np.resize(np.asarray(noise, np.float32), speech.shape)
    p_speech, p_noise = float(np.mean(speech ** 2)), float(np.mean(noise ** 2))
    if p_speech == 0.0 or p_noise == 0.0:
        raise SpeechError("cannot mix at an SNR: the speech or the noise is silent")
    gain = np.sqrt(p_speech / (p_noise * 10 ** (snr_db / 10)))
    mixed = speech + gain * noise
    peak = float(np.max(np.abs(mixed)))
    return mixed / peak * 0.95 if peak > 0.95 else mixed  # scaled, never clipped: the SNR stays as stated
