"""Speech commands without the real models: WAV reading, noise mixing, the transformers Whisper pipeline
on a tiny local model (loaded offline through from_pretrained), and the lifecycle speech node publishing
transcripts under real rclpy with VAD off. The real Whisper base and Silero VAD: test_spoken_commands.py."""
from __future__ import annotations

import math

import numpy as np
import pytest
from tiny_whisper import build_tiny_whisper

from conceptagent_ros.speech.asr import PipelineWhisperTranscriber, load_transcriber
from conceptagent_ros.speech.audio import SpeechError, mix_at_snr, prepare_audio, read_wav, write_wav


@pytest.fixture(scope="module")
def whisper_dir(tmp_path_factory):
    pytest.importorskip("transformers")
    return build_tiny_whisper(tmp_path_factory.mktemp("whisper"))


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_read_wav_mixes_channels_and_prepare_resamples(tmp_path):
    import wave

    left, right = np.full(4410, 0.5), np.full(4410, -0.25)
    with wave.open(str(tmp_path / "s.wav"), "wb") as f:
        f.setnchannels(2)
        f.setsampwidth(2)
        f.setframerate(44100)
        f.writeframes((np.stack([left, right], axis=1).reshape(-1) * 32767).astype("<i2").tobytes())
    samples, rate = read_wav(tmp_path / "s.wav")
    assert rate == 44100 and samples.shape == (4410,)
    assert samples.mean() == pytest.approx(0.125, abs=1e-3)
    assert prepare_audio(samples, rate).shape == (1600,)  # 0.1 s at 16 kHz


@pytest.mark.parametrize("samples, rate, message", [
    (np.zeros(0), 16000, "empty"), (np.array([0.1, np.nan]), 16000, "NaN"), (np.zeros(16000 * 61), 16000, "long"),
    (np.zeros(10), 0, "sample rate"),
])
def test_bad_audio_is_refused_with_the_reason(samples, rate, message):
    with pytest.raises(SpeechError, match=message):
        prepare_audio(samples, rate)


def test_not_a_wav_file(tmp_path):
    (tmp_path / "x.wav").write_bytes(b"not audio at all")
    with pytest.raises(SpeechError, match="not a readable PCM WAV"):
        read_wav(tmp_path / "x.wav")


def test_noise_is_mixed_at_the_stated_snr():
    rng = np.random.default_rng(4)
    speech = 0.3 * np.sin(np.linspace(0, 2000, 16000)).astype(np.float32)
    noise = rng.normal(0, 1, 8000).astype(np.float32)
    mixed = mix_at_snr(speech, noise, 10.0)
    scale = np.dot(mixed, speech) / np.dot(speech, speech)  # undo a peak normalisation, if any
    residual = mixed - scale * speech
    snr = 10 * math.log10(np.mean((scale * speech) ** 2) / np.mean(residual ** 2))
    assert snr == pytest.approx(10.0, abs=0.3)
    assert np.max(np.abs(mixed)) <= 0.95 + 1e-6
    with pytest.raises(SpeechError, match="silent"):
        mix_at_snr(np.zeros(100), noise, 10.0)


def test_whisper_pipeline_transcribes_from_a_local_folder(whisper_dir):
    transcriber = PipelineWhisperTranscriber(str(whisper_dir))
    noise = np.random.default_rng(1).normal(0, 0.1, 8000).astype(np.float32)
    heard = transcriber.transcribe(noise, 8000)
    assert heard.text == "open the fridge" and math.isnan(heard.confidence)


def test_missing_model_is_a_clear_error(tmp_path, monkeypatch):
    with pytest.raises(SpeechError, match="cannot load the ASR model"):
        load_transcriber(str(tmp_path / "nothing-here"))
    monkeypatch.setenv("CONCEPTAGENT_MODELS", str(tmp_path / "no-models"))
    with pytest.raises(SpeechError, match="conceptagent models fetch --model whisper-base"):
        load_transcriber("whisper-base")
    with pytest.raises(SpeechError, match="not a speech model"):
        load_transcriber("all-minilm-l6-v2")


def test_speech_node_publishes_transcripts(ros_context, whisper_dir, tmp_path):
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from ros_helpers import Spinning, wait_until
    from std_msgs.msg import Int16MultiArray, String

    from conceptagent_ros.ros.speech_node import SpeechNode

    node = SpeechNode(namespace="s", context=ros_context, parameter_overrides=[
        Parameter("model", value=str(whisper_dir)), Parameter("vad", value=False)])  # each message one utterance
    listener = Node("listener", namespace="s", context=ros_context)
    heard: list[str] = []
    replies: list[str] = []
    listener.create_subscription(String, "command", lambda m: heard.append(m.data), 10)
    listener.create_subscription(String, "reply", lambda m: replies.append(m.data), 10)
    audio_pub = listener.create_publisher(Int16MultiArray, "audio_int16", 10)
    file_pub = listener.create_publisher(String, "audio_file", 10)
    executor = MultiThreadedExecutor(num_threads=3, context=ros_context)
    executor.add_node(node)
    executor.add_node(listener)
    spinning = Spinning(executor)
    try:
        assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
        node.trigger_activate()
        wait_until(lambda: audio_pub.get_subscription_count() and file_pub.get_subscription_count(), 5.0, "subscribers")
        audio_pub.publish(Int16MultiArray(data=[int(v) for v in np.random.default_rng(2).integers(-3000, 3000, 16000)]))
        wait_until(lambda: heard == ["open the fridge"], 20.0, "transcript of the int16 audio")
        file_pub.publish(String(data=str(tmp_path / "missing.wav")))  # logged, nothing published, node lives on
        write_wav(tmp_path / "cmd.wav", np.random.default_rng(3).normal(0, 0.1, 22050), 22050)
        file_pub.publish(String(data=str(tmp_path / "cmd.wav")))
        wait_until(lambda: len(heard) == 2, 20.0, "transcript of the WAV file")
        assert heard == ["open the fridge", "open the fridge"]
        wait_until(lambda: replies == ["OK: open the fridge"] * 2, 5.0, "a reply per transcript")
    finally:
        spinning.stop()
        listener.destroy_node()
        node.destroy_node()


class _Fixed:
    """A transcriber that heard what it is told, and records the prompt it was given."""

    def __init__(self, text: str, confidence: float = 0.7, no_speech: float = 0.02):
        self.text, self.confidence, self.no_speech, self.prompts = text, confidence, no_speech, []

    def transcribe(self, audio, sample_rate, prompt=""):
        from conceptagent_ros.speech.asr import Transcript

        self.prompts.append(prompt)
        return Transcript(self.text, self.confidence, self.no_speech, 0.1)


@pytest.mark.parametrize("text, confidence, no_speech, accepted, reply", [
    ("Put the apple in the fridge.", 0.7, 0.02, True, "OK: Put the apple in the fridge."),
    ("I need the bread sliced", 0.7, 0.02, True, "OK:"),
    ("would you be so kind as to open the fridge", 0.7, 0.02, True, "OK:"),
    ("Thank you.", 0.7, 0.02, False, "does not ask me to do anything"),
    ("Take the asshole in the face.", 0.41, 0.08, False, "not sure I heard you right"),
    ("You", 0.45, 0.74, False, "did not hear anything"),
    ("", 0.0, 1.0, False, "did not hear anything"),
])
def test_what_was_heard_is_judged(text, confidence, no_speech, accepted, reply):
    from conceptagent_ros.speech.hearing import Hearing, HearingSettings

    hearing = Hearing(_Fixed(text, confidence, no_speech), HearingSettings(use_vad=False))
    heard = hearing.hear_utterance(np.zeros(8000, np.float32))
    assert heard.accepted is accepted and reply in heard.reply


def test_whisper_is_told_the_names_of_the_things_about():
    from conceptagent_ros.speech.hearing import Hearing, HearingSettings, names_of, scene_vocabulary

    assert names_of(["remote_control", "fridge", "remote_control", " "]) == ["fridge", "remote control"]
    words = scene_vocabulary("studio_kitchen")
    assert words == sorted(words) and {"garbage can", "fridge", "kitchen"} <= set(words)
    fixed = _Fixed("open the fridge")
    hearing = Hearing(fixed, HearingSettings(use_vad=False), vocabulary=words)
    hearing.hear_utterance(np.zeros(8000, np.float32))
    hearing.vocabulary = ()
    hearing.hear_utterance(np.zeros(8000, np.float32))
    assert "garbage can" in fixed.prompts[0] and fixed.prompts[0].startswith("Put the cup")
    assert fixed.prompts[1] == ""
