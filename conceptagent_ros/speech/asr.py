"""Speech to text for spoken commands. No ROS here; ros/speech_node.py wraps it.

Two transcribers behind one Protocol:
- FasterWhisperTranscriber: faster-whisper (CTranslate2, int8 on CPU) on the Whisper base model that
  `conceptagent models fetch --model whisper-base` fetches; what users run. It reports how sure it
  is (the mean token probability) and how likely the clip holds no speech.
- PipelineWhisperTranscriber: a transformers automatic-speech-recognition pipeline on a Whisper
  saved with `save_pretrained` (the tests' tiny random model, or a hub model already in the cache).

Models load from local files only: nothing is downloaded behind the user's back.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.speech.audio import WHISPER_RATE, SpeechError, prepare_audio

DEFAULT_ASR_MODEL = "whisper-base"  # a name in models/catalogue.py


@dataclass(frozen=True)
class Transcript:
    text: str
    confidence: float  # geometric mean of the tokens' probabilities in [0, 1]; NaN where the model cannot say
    no_speech: float  # the model's probability that the clip holds no speech; NaN where it cannot say
    seconds: float  # wall time of the transcription


class Transcriber(Protocol):
    def transcribe(self, audio: np.ndarray, sample_rate: int, prompt: str = "") -> Transcript:
        """`prompt`: text that comes before, to bias the words heard (the things the robot knows of)."""
        ...


class FasterWhisperTranscriber:
    """faster-whisper on a CTranslate2 Whisper folder (model.bin, config.json, tokenizer.json)."""

    def __init__(self, folder: str | Path, language: str = "en", threads: int = 0, beam_size: int = 5):
        try:
            from faster_whisper import WhisperModel
        except ImportError as e:
            raise SpeechError("speech needs faster-whisper: pip install -c constraints.txt -e '.[speech]'") from e
        if not (Path(folder) / "model.bin").is_file():
            raise SpeechError(f"{folder} is not a CTranslate2 Whisper folder (no model.bin); fetch one with "
                              "`conceptagent models fetch --model whisper-base`")
        try:
            self._model: Any = WhisperModel(str(folder), device="cpu", compute_type="int8", cpu_threads=threads,
                                            local_files_only=True)
        except (OSError, RuntimeError, ValueError) as e:
            raise SpeechError(f"cannot load the Whisper model in {folder}: {str(e).splitlines()[0]}") from e
        self.language, self.beam_size = language, beam_size

    def transcribe(self, audio: np.ndarray, sample_rate: int, prompt: str = "") -> Transcript:
        prepared = prepare_audio(audio, sample_rate)
        start = time.perf_counter()
        segments, _info = self._model.transcribe(prepared, language=self.language, beam_size=self.beam_size,
                                                 condition_on_previous_text=False, vad_filter=False,
                                                 initial_prompt=prompt or None)
        segments = list(segments)  # the generator does the decoding
        tokens = sum(len(s.tokens) for s in segments)
        text = " ".join(" ".join(s.text for s in segments).split())
        if not segments or tokens == 0:
            return Transcript(text, 0.0, 1.0, time.perf_counter() - start)
        mean_logprob = sum(s.avg_logprob * len(s.tokens) for s in segments) / tokens
        return Transcript(text, float(math.exp(mean_logprob)), float(segments[0].no_speech_prob),
                          time.perf_counter() - start)


class PipelineWhisperTranscriber:
    """A transformers ASR pipeline; `model` is a local folder or a cached hub id. It gives no confidence."""

    def __init__(self, model: str, device: str = "cpu", local_files_only: bool = True):
        try:
            from transformers import AutoModelForSpeechSeq2Seq, AutoProcessor, pipeline
        except ImportError as e:
            raise SpeechError("this ASR model needs transformers and torch: pip install -c constraints.txt "
                              "-e '.[local-llm]'") from e
        try:  # loaded here, so that local_files_only reaches from_pretrained and nothing is downloaded
            processor = AutoProcessor.from_pretrained(model, local_files_only=local_files_only)
            network = AutoModelForSpeechSeq2Seq.from_pretrained(model, local_files_only=local_files_only)
        except (OSError, ValueError) as e:
            raise SpeechError(f"cannot load the ASR model {model!r} ({str(e).splitlines()[0]}); give a folder "
                              f"saved with save_pretrained, or `{DEFAULT_ASR_MODEL}` (fetched by "
                              f"`conceptagent models fetch --model {DEFAULT_ASR_MODEL}`)") from e
        self._pipe: Any = pipeline("automatic-speech-recognition", model=network, tokenizer=processor.tokenizer,
                                   feature_extractor=processor.feature_extractor, device=device)

    def transcribe(self, audio: np.ndarray, sample_rate: int, prompt: str = "") -> Transcript:
        prepared = prepare_audio(audio, sample_rate)  # the pipeline takes no prompt: it is ignored
        start = time.perf_counter()
        out = self._pipe({"raw": prepared, "sampling_rate": WHISPER_RATE})
        return Transcript(" ".join(str(out.get("text", "")).split()), math.nan, math.nan, time.perf_counter() - start)


def load_transcriber(model: str = DEFAULT_ASR_MODEL, device: str = "cpu", threads: int = 0) -> Transcriber:
    """A model of the catalogue by name (`whisper-base`), a CTranslate2 folder, or a transformers
    Whisper folder / cached hub id."""
    from conceptagent_ros.models.catalogue import CATALOGUE
    from conceptagent_ros.models.store import fetched_path

    if model in CATALOGUE:
        if CATALOGUE[model].kind != "speech":
            raise SpeechError(f"{model} is not a speech model; the speech models: "
                              f"{', '.join(n for n, m in CATALOGUE.items() if m.kind == 'speech')}")
        try:
            return FasterWhisperTranscriber(fetched_path(model), threads=threads)
        except ConceptAgentError as e:
            raise SpeechError(str(e)) from e
    if (Path(model) / "model.bin").is_file():
        return FasterWhisperTranscriber(model, threads=threads)
    return PipelineWhisperTranscriber(model, device)
