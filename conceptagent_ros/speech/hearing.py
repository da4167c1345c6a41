"""Hearing a command: voice activity, then Whisper, then a judgement of what was heard.

What was heard becomes a command only when someone spoke (Silero VAD found speech, Whisper did not
think the clip empty), the transcript is sure enough, and it asks the robot to do something (it has
a verb or state word of the translator's phrasing, config/phrasing.yaml). Otherwise the robot says
why it will not act, in words meant to be spoken back, and no task starts.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conceptagent_ros.speech.asr import DEFAULT_ASR_MODEL, Transcriber, Transcript, load_transcriber
from conceptagent_ros.speech.audio import WHISPER_RATE, SpeechError, prepare_audio, read_wav
from conceptagent_ros.speech.vad import VadSettings, speech_spans

PAD = WHISPER_RATE // 5  # kept either side of the speech found in a recording


@dataclass(frozen=True)
class HearingSettings:
    # Whisper base's mean token probability: 0.66-0.76 on clean synthesized commands, below 0.45 on
    # the words it invents for noise (measured on the development phrasings, docs/speech.md).
    min_confidence: float = 0.45
    max_no_speech: float = 0.6  # above it Whisper thinks nobody spoke (0.74 on silence; below 0.06 on commands)
    min_chars: int = 2
    use_vad: bool = True
    vad: VadSettings = field(default_factory=VadSettings)


@dataclass(frozen=True)
class Heard:
    text: str  # the transcript; "" when nothing was said
    confidence: float  # NaN where the transcriber cannot say
    accepted: bool  # a command to act on
    reply: str  # what the robot says back: the refusal's reason, or that it will do it
    seconds: float = 0.0  # transcription time


def _stems(word: str) -> set[str]:
    stems = {word}
    for suffix in ("s", "es", "ed", "d", "ing"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            stems.add(word[: -len(suffix)])
    return stems


def asks_for_an_action(text: str) -> bool:
    """Whether the words ask the robot to do something: a verb the translator acts on ("put",
    "turn on", "throw away") or a state asked for ("I need the bread sliced")."""
    from conceptagent_ros.planning.free_text.lexicon import load_lexicon

    lexicon = load_lexicon()
    words = re.findall(r"[a-z]+", text.lower())
    single = {p[0] for p in lexicon.verbs.phrases if len(p) == 1} | set(lexicon.state_adjectives)
    return any(_stems(w) & single for w in words) or any(lexicon.verbs.match(words, i) for i in range(len(words)))


class Hearing:
    def __init__(self, transcriber: Transcriber, settings: HearingSettings | None = None, vad_model: Any = None,
                 vocabulary: Iterable[str] = ()):
        self.transcriber = transcriber
        self.vocabulary = tuple(vocabulary)  # what the robot knows of here: the names of the things about
        self.settings = settings or HearingSettings()
        self._vad_model = vad_model
        if self.settings.use_vad and self._vad_model is None:
            from conceptagent_ros.speech.vad import load_vad_model

            self._vad_model = load_vad_model()

    def prompt(self) -> str:
        """Whisper's prompt: a few commands, then the names of the things about. Heard alone, a short
        word is often taken for another ("put" for "but" or "book", "mug" for "mark", "egg" for "again");
        told that commands come and a mug is about, Whisper writes "put" and "mug". Chosen on the
        development phrasings (config/speech/spoken_commands.yaml; docs/speech.md has the figures)."""
        if not self.vocabulary:
            return ""
        return ("Put the cup in the sink. Open the fridge. Close it. Turn on the lamp. Bring the book here. "
                "Things here: " + ", ".join(self.vocabulary) + ".")

    def hear_recording(self, samples: np.ndarray, sample_rate: int) -> Heard:
        """A whole recording (a WAV file, one message): the span from the first speech to the last."""
        audio = prepare_audio(samples, sample_rate)
        if self.settings.use_vad:
            spans = speech_spans(audio, self.settings.vad, self._vad_model)
            if not spans:
                return self._nothing_said()
            audio = audio[max(0, spans[0][0] - PAD): spans[-1][1] + PAD]
        return self.judge(self.transcriber.transcribe(audio, WHISPER_RATE, self.prompt()))

    def hear_utterance(self, audio16k: np.ndarray) -> Heard:
        """An utterance that the VAD already cut out of a stream."""
        return self.judge(self.transcriber.transcribe(audio16k, WHISPER_RATE, self.prompt()))

    def judge(self, transcript: Transcript) -> Heard:
        s, text, p = self.settings, transcript.text.strip(), transcript.confidence
        if len(text) < s.min_chars or transcript.no_speech > s.max_no_speech:  # False for NaN
            return self._nothing_said(transcript)
        if not math.isnan(p) and p < s.min_confidence:
            return Heard(text, p, False, f"I am not sure I heard you right: \"{text}\"? Please say it again.",
                         transcript.seconds)
        if not asks_for_an_action(text):
            return Heard(text, p, False, f"I heard \"{text}\", but that does not ask me to do anything. Tell me "
                                         "what to do, for example: put the apple in the fridge.", transcript.seconds)
        return Heard(text, p, True, f"OK: {text}", transcript.seconds)

    @staticmethod
    def _nothing_said(transcript: Transcript | None = None) -> Heard:
        return Heard("", transcript.confidence if transcript else math.nan, False,
                     "I did not hear anything said. Please say the command again.",
                     transcript.seconds if transcript else 0.0)


def command_from_wav(path: str, model: str = DEFAULT_ASR_MODEL, vocabulary: Iterable[str] = ()) -> Heard:
    """The command spoken in a WAV file, or SpeechError whose message is what the robot says back."""
    samples, rate = read_wav(path)
    heard = Hearing(load_transcriber(model), vocabulary=vocabulary).hear_recording(samples, rate)
    if not heard.accepted:
        raise SpeechError(f"{path}: {heard.reply}")
    return heard


def names_of(categories: Iterable[str]) -> list[str]:
    """Whisper's vocabulary from object categories or labels (`remote_control` -> "remote control"),
    sorted: the same scene gives the same prompt, and the same transcript, on every run."""
    return sorted(set(" ".join(c.replace("_", " ").split()) for c in categories if c and c.strip()))


def scene_vocabulary(scene: str) -> list[str]:
    """The names of the things in a scene (built-in name or YAML path), rooms included."""
    from conceptagent_ros.scene.loader import load_scene

    loaded = load_scene(scene)
    return names_of([*loaded.categories(), *(room.category for room in loaded.rooms.values())])
