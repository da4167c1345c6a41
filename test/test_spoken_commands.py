"""Spoken commands on the real models: flite says a command, Silero VAD finds it, faster-whisper on the
fetched Whisper base hears it, and the no-model translator reads the same goal as from the text; then
through the ROS graph (audio topic -> speech node -> command -> planner -> the task done) and the CLI.
Silence, noise and words that ask for nothing end in a refusal said on `reply`, and no task.

`make test` installs flite, fetches whisper-base and sets CONCEPTAGENT_REQUIRE_SPEECH: nothing here skips.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conceptagent_ros.models.store import is_fetched, lookup
from conceptagent_ros.speech.audio import WHISPER_RATE, resample, write_wav
from conceptagent_ros.speech.synthesis import flite_available, say_with_flite

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def hearing():
    problem = ("flite is not installed (tools/ensure_flite.sh)" if not flite_available() else
               "whisper-base is not fetched (conceptagent models fetch --model whisper-base)"
               if not is_fetched(lookup("whisper-base")) else "")
    try:
        import faster_whisper  # noqa: F401
        import silero_vad  # noqa: F401
    except ImportError as e:
        problem = problem or f"faster-whisper / silero-vad not installed ({e})"
    if problem:
        if os.environ.get("CONCEPTAGENT_REQUIRE_SPEECH"):
            pytest.fail(problem)
        pytest.skip(problem)
    from conceptagent_ros.speech.asr import load_transcriber
    from conceptagent_ros.speech.hearing import Hearing

    return Hearing(load_transcriber("whisper-base"))


def _spoken(text: str, voice: str) -> np.ndarray:
    samples, rate = say_with_flite(text, voice)
    return resample(samples, rate, WHISPER_RATE)


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * WHISPER_RATE), np.float32)


@pytest.mark.parametrize("voice", ["rms", "awb"])
@pytest.mark.parametrize("scene, text", [
    ("studio_kitchen", "put the apple in the fridge"),
    ("family_house", "could you please put the mug in the sink"),
    ("studio_kitchen", "throw the tomato in the garbage"),
])
def test_a_spoken_command_means_what_the_text_means(hearing, voice, scene, text):
    from conceptagent_ros.evaluation.goal_equivalence import SceneGoals

    heard = hearing.hear_recording(np.concatenate([_silence(0.5), _spoken(text, voice), _silence(0.5)]), WHISPER_RATE)
    assert heard.accepted, heard.reply
    assert 0.45 <= heard.confidence <= 1.0
    goals = SceneGoals(scene)
    assert goals.verdict(goals.translate(heard.text), goals.translate(text)).same, (heard.text, text)


@pytest.mark.parametrize("what, audio", [
    ("silence", np.zeros(3 * WHISPER_RATE, np.float32)),
    ("white noise", np.random.default_rng(5).normal(0, 0.05, 3 * WHISPER_RATE).astype(np.float32)),
    ("hum", (0.2 * np.sin(2 * np.pi * 50 * np.arange(3 * WHISPER_RATE) / WHISPER_RATE)).astype(np.float32)),
])
def test_nothing_said_is_refused(hearing, what, audio):
    heard = hearing.hear_recording(audio, WHISPER_RATE)
    assert not heard.accepted and heard.text == ""
    assert "did not hear anything" in heard.reply


def test_words_that_ask_for_nothing_are_refused(hearing):
    heard = hearing.hear_recording(_spoken("thank you very much", "rms"), WHISPER_RATE)
    assert not heard.accepted and "does not ask me to do anything" in heard.reply, heard


def test_a_live_stream_is_cut_into_utterances(hearing):
    from conceptagent_ros.speech.vad import UtteranceStream

    audio = np.concatenate([_silence(1.0), _spoken("open the fridge", "slt"), _silence(1.2),
                            _spoken("close the microwave", "rms"), _silence(1.2)])
    stream = UtteranceStream()
    utterances = [u for k in range(0, audio.size, 1600) for u in stream.feed(audio[k:k + 1600])]  # 100 ms chunks
    assert stream.flush() is None
    texts = [hearing.hear_utterance(u).text.lower().strip(".") for u in utterances]
    assert texts == ["open the fridge", "close the microwave"]


def test_run_takes_the_instruction_as_a_wav_file(hearing, tmp_path):
    samples, rate = say_with_flite("put the apple in the fridge", "awb")
    write_wav(tmp_path / "cmd.wav", samples, rate)
    write_wav(tmp_path / "quiet.wav", np.zeros(rate * 2), rate)
    cli = [sys.executable, "-m", "conceptagent_ros.cli"]
    done = subprocess.run([*cli, "run", "--audio", str(tmp_path / "cmd.wav")], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Heard: Put the apple in the fridge" in done.stdout and "SUCCESS" in done.stdout
    quiet = subprocess.run([*cli, "run", "--audio", str(tmp_path / "quiet.wav")], capture_output=True, text=True,
                           timeout=300, cwd=REPO)
    assert quiet.returncode == 2 and "did not hear anything said" in quiet.stderr


def test_a_spoken_command_reaches_the_planner_through_the_ros_graph(hearing, ros_context):
    from ros_helpers import Spinning, require_ros, wait_until

    require_ros()
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.node import Node
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Int16MultiArray, String

    from conceptagent_ros.msg import HeardSpeech, TaskStatus
    from conceptagent_ros.ros.bringup import GraphOptions, bring_up
    from conceptagent_ros.ros.speech_node import SpeechNode

    graph = bring_up(GraphOptions(), context=ros_context)
    speech = SpeechNode(namespace="conceptagent", context=ros_context)
    client = Node("microphone", namespace="conceptagent", context=ros_context)
    statuses: list = []
    heard: list = []
    replies: list[str] = []
    latched = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    client.create_subscription(TaskStatus, "task_status", statuses.append, latched)
    client.create_subscription(HeardSpeech, "heard", heard.append, 10)
    client.create_subscription(String, "reply", lambda m: replies.append(m.data), 10)
    microphone = client.create_publisher(Int16MultiArray, "audio_int16", 50)
    executor = MultiThreadedExecutor(num_threads=3, context=ros_context)
    executor.add_node(speech)
    executor.add_node(client)
    spinning = Spinning(executor)

    def speak(audio: np.ndarray) -> None:  # as a microphone driver does: 100 ms chunks of 16-bit PCM
        pcm = (np.clip(audio, -1, 1) * 32767).astype(np.int16)
        for k in range(0, pcm.size, 1600):
            microphone.publish(Int16MultiArray(data=pcm[k:k + 1600].tolist()))

    final = {TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.REJECTED}
    try:
        assert speech.trigger_configure() == TransitionCallbackReturn.SUCCESS
        speech.trigger_activate()
        wait_until(lambda: microphone.get_subscription_count() > 0, 10.0, "the speech node subscribed to audio_int16")
        wait_until(lambda: graph.nodes["planner"].count_publishers("/conceptagent/command") >= 1, 10.0,
                   "the planner discovering the speech node's command publisher")
        rng = np.random.default_rng(6)
        speak(np.concatenate([_silence(0.5), rng.normal(0, 0.01, WHISPER_RATE).astype(np.float32), _silence(1.0)]))
        speak(np.concatenate([_spoken("put the apple in the fridge please", "kal"), _silence(1.2)]))
        wait_until(lambda: any(s.state in final for s in statuses), 120.0, "a final task status")
        done = [s for s in statuses if s.state in final]
        assert len(done) == 1 and done[0].state == TaskStatus.SUCCEEDED, done[-1].message
        assert graph.nodes["robot"].world.scene.objects["apple_1"].parent == "fridge_1"  # the true world
        accepted = [h for h in heard if h.accepted]
        assert len(accepted) == 1 and "apple" in accepted[0].text.lower() and accepted[0].confidence >= 0.45
        assert replies and replies[-1].startswith("OK:")
    finally:
        spinning.stop()
        client.destroy_node()
        speech.destroy_node()
        graph.shutdown()
