"""Spoken commands: audio in, text commands out, through a Whisper ASR pipeline (speech/asr.py).

A lifecycle node: the model loads in on_configure and is freed in on_cleanup; audio is only
transcribed while active. With autostart (default) main() configures and activates it.

Subscribes:  audio (std_msgs/Float32MultiArray)      mono samples in [-1, 1] at sample_rate
             audio_int16 (std_msgs/Int16MultiArray)  mono 16-bit PCM at sample_rate
             audio_file (std_msgs/String)            path of a WAV file
Publishes:   command (std_msgs/String)               the transcript, for the planner node
Parameters:  model (string, openai/whisper-base.en): local folder or cached hub id (never downloaded here);
             device (string, cpu); sample_rate (int, 16000); min_chars (int, 2): shorter transcripts are dropped;
             autostart (bool, true)
"""
from __future__ import annotations

from typing import Any

import numpy as np
from rcl_interfaces.msg import IntegerRange, ParameterDescriptor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from std_msgs.msg import Float32MultiArray, Int16MultiArray, String

from conceptagent_ros.ros.spin import autostart_lifecycle, run_node
from conceptagent_ros.speech.asr import SpeechError, Transcriber, WhisperTranscriber, read_wav


class SpeechNode(LifecycleNode):
    __doc__ = __doc__

    def __init__(self, node_name: str = "speech", namespace: str = "", **kwargs: Any):
        super().__init__(node_name, namespace=namespace, **kwargs)
        d = ParameterDescriptor
        self.declare_parameter("model", "openai/whisper-base.en", d(description="ASR model folder or cached hub id"))
        self.declare_parameter("device", "cpu", d(description="torch device"))
        self.declare_parameter("sample_rate", 16000, d(description="Hz of the audio topics",
                                                       integer_range=[IntegerRange(from_value=1000, to_value=192000)]))
        self.declare_parameter("min_chars", 2, d(description="shorter transcripts are not published"))
        self.declare_parameter("autostart", True, d(description="configure and activate at start"))
        self.transcriber: Transcriber | None = None
        self._active = False
        self.command_pub = self.create_publisher(String, "command", 10)
        self.create_subscription(Float32MultiArray, "audio", lambda m: self._heard(np.asarray(m.data, np.float32)), 2)
        self.create_subscription(Int16MultiArray, "audio_int16",
                                 lambda m: self._heard(np.asarray(m.data, np.float32) / 32768.0), 2)
        self.create_subscription(String, "audio_file", self._heard_file, 2)

    # -- lifecycle -------------------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        model = self.get_parameter("model").value
        try:
            self.transcriber = WhisperTranscriber(model, self.get_parameter("device").value)
        except SpeechError as e:
            self.get_logger().error(str(e))
            return TransitionCallbackReturn.FAILURE
        self.get_logger().info(f"ASR model loaded: {model}")
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._active = True
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._active = False
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.transcriber = None
        return TransitionCallbackReturn.SUCCESS

    # -- audio -----------------------------------------------------------------------------------------
    def _heard_file(self, msg: String) -> None:
        try:
            samples, rate = read_wav(msg.data)
        except SpeechError as e:
            self.get_logger().error(str(e))
            return
        self._heard(samples, rate)

    def _heard(self, samples: np.ndarray, rate: int | None = None) -> None:
        if not self._active or self.transcriber is None:
            self.get_logger().warning("audio ignored: the speech node is not active")
            return
        try:
            text = self.transcriber.transcribe(samples, rate or self.get_parameter("sample_rate").value)
        except SpeechError as e:
            self.get_logger().error(f"audio not transcribed: {e}")
            return
        if len(text) < self.get_parameter("min_chars").value:
            self.get_logger().info(f"transcript {text!r} too short; not a command")
            return
        self.get_logger().info(f"heard: {text}")
        self.command_pub.publish(String(data=text))


def main(args: list[str] | None = None) -> None:
    run_node(SpeechNode, threads=2, args=args, before_spin=autostart_lifecycle)
