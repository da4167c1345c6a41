"""Speech commands: WAV reading, the Whisper pipeline on a tiny local model (loaded offline through
from_pretrained), and the lifecycle speech node publishing transcripts under real rclpy."""
from __future__ import annotations

import threading
import wave

import numpy as np
import pytest
from tiny_whisper import build_tiny_whisper

from conceptagent_ros.speech.asr import SpeechError, WhisperTranscriber, prepare_audio, read_wav


@pytest.fixture(scope="module")
def whisper_dir(tmp_path_factory):
    pytest.importorskip("transformers")
    return build_tiny_whisper(tmp_path_factory.mktemp("whisper"))


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def write_wav(path, samples: np.ndarray, rate: int, channels: int = 1) -> None:
    pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as f:
        f.setnchannels(channels)
        f.setsampwidth(2)
        f.setframerate(rate)
        f.writeframes(pcm.tobytes())


def test_read_wav_mixes_channels_and_prepare_resamples(tmp_path):
    left, right = np.full(4410, 0.5), np.full(4410, -0.25)
    write_wav(tmp_path / "s.wav", np.stack([left, right], axis=1).reshape(-1), 44100, channels=2)
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


def test_whisper_pipeline_transcribes_from_a_local_folder(whisper_dir):
    transcriber = WhisperTranscriber(str(whisper_dir))
    noise = np.random.default_rng(1).normal(0, 0.1, 8000).astype(np.float32)
    assert transcriber.transcribe(noise, 8000) == "open the fridge"


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(SpeechError, match="cannot load the ASR model"):
        WhisperTranscriber(str(tmp_path / "nothing-here"))


def test_speech_node_publishes_transcripts(ros_context, whisper_dir, tmp_path):
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from ros_helpers import wait_until
    from std_msgs.msg import Int16MultiArray, String

    from conceptagent_ros.ros.speech_node import SpeechNode

    node = SpeechNode(namespace="s", context=ros_context, parameter_overrides=[Parameter("model", value=str(whisper_dir))])
    listener = Node("listener", namespace="s", context=ros_context)
    heard: list[str] = []
    listener.create_subscription(String, "command", lambda m: heard.append(m.data), 10)
    audio_pub = listener.create_publisher(Int16MultiArray, "audio_int16", 10)
    file_pub = listener.create_publisher(String, "audio_file", 10)
    executor = MultiThreadedExecutor(num_threads=3, context=ros_context)
    executor.add_node(node)
    executor.add_node(listener)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
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
    finally:
        executor.shutdown(timeout_sec=1.0)
        listener.destroy_node()
        node.destroy_node()
