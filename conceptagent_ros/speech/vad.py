"""Voice activity: where in the audio someone speaks, with Silero VAD (the ONNX model that the
silero-vad package bundles, run by onnxruntime).

- speech_spans: the spans of speech in a whole recording (a WAV file, one message);
- UtteranceStream: a live audio stream in chunks of any size, cut into utterances: one ends after
  `min_silence_ms` of silence, or when it reaches MAX_SECONDS.
Whisper makes up words for silence and noise ("Thank you."); only audio that holds speech reaches it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conceptagent_ros.speech.audio import MAX_SECONDS, WHISPER_RATE, SpeechError

WINDOW = 512  # samples per Silero step at 16 kHz (32 ms)
PRE_ROLL = WHISPER_RATE // 4  # kept before a detected start: the first syllable often scores low


def load_vad_model() -> Any:
    try:
        from silero_vad import load_silero_vad
    except ImportError as e:
        raise SpeechError("voice activity detection needs silero-vad and onnxruntime: "
                          "pip install -c constraints.txt -e '.[speech]'") from e
    return load_silero_vad(onnx=True)


@dataclass(frozen=True)
class VadSettings:
    threshold: float = 0.5  # Silero's speech probability; its authors' default
    min_speech_ms: int = 250  # shorter bursts (a click, a cough) are not speech
    min_silence_ms: int = 600  # a pause this long ends an utterance


def speech_spans(audio16k: np.ndarray, settings: VadSettings = VadSettings(), model: Any = None) -> list[tuple[int, int]]:
    """(start, end) sample indices of speech in a 16 kHz recording."""
    import torch
    from silero_vad import get_speech_timestamps

    model = model if model is not None else load_vad_model()
    stamps = get_speech_timestamps(torch.from_numpy(np.ascontiguousarray(audio16k, np.float32)), model,
                                   threshold=settings.threshold, sampling_rate=WHISPER_RATE,
                                   min_speech_duration_ms=settings.min_speech_ms,
                                   min_silence_duration_ms=settings.min_silence_ms)
    return [(int(s["start"]), int(s["end"])) for s in stamps]


@dataclass
class UtteranceStream:
    """Feed 16 kHz chunks; get back each utterance once it has ended."""
    settings: VadSettings = VadSettings()
    model: Any = None
    _pending: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    _recent: list[np.ndarray] = field(default_factory=list)  # the pre-roll while nobody speaks
    _speech: list[np.ndarray] = field(default_factory=list)
    _iterator: Any = None

    def __post_init__(self) -> None:
        from silero_vad import VADIterator

        self.model = self.model if self.model is not None else load_vad_model()
        self._iterator = VADIterator(self.model, threshold=self.settings.threshold, sampling_rate=WHISPER_RATE,
                                     min_silence_duration_ms=self.settings.min_silence_ms)

    @property
    def speaking(self) -> bool:
        return bool(self._speech)

    def feed(self, chunk16k: np.ndarray) -> list[np.ndarray]:
        import torch

        done: list[np.ndarray] = []
        audio = np.concatenate([self._pending, np.asarray(chunk16k, np.float32).reshape(-1)])
        steps = audio.size // WINDOW
        self._pending = audio[steps * WINDOW:]
        for k in range(steps):
            window = audio[k * WINDOW:(k + 1) * WINDOW]
            event = self._iterator(torch.from_numpy(window.copy()))
            if self._speech:
                self._speech.append(window)
                if (event and "end" in event) or sum(w.size for w in self._speech) >= MAX_SECONDS * WHISPER_RATE:
                    done.append(self._finish())
            elif event and "start" in event:
                self._speech = [*self._recent, window]
                self._recent = []
            else:
                self._recent = [*self._recent, window][-(PRE_ROLL // WINDOW):]
        return [u for u in done if u.size >= self.settings.min_speech_ms * WHISPER_RATE // 1000]

    def flush(self) -> np.ndarray | None:
        """The utterance under way, if any (the stream stopped while someone spoke)."""
        return self._finish() if self._speech else None

    def _finish(self) -> np.ndarray:
        utterance = np.concatenate(self._speech)
        self._speech = []
        self._iterator.reset_states()
        return utterance
