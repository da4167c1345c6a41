"""Spoken commands: audio in, text commands out (speech/hearing.py: Silero VAD, faster-whisper, and a
judgement of what was heard).

A lifecycle node: the models load in on_configure and are freed in on_cleanup; audio is only heard
while active. With autostart (default) main() configures and activates it.

Subscribes:  audio (std_msgs/Float32MultiArray)      a live stream: mono samples in [-1, 1] at sample_rate,
                                                     chunks of any size, cut into utterances by the VAD
             audio_int16 (std_msgs/Int16MultiArray)  the same as 16-bit PCM (audio_common's format)
             audio_file (std_msgs/String)            path of a WAV file: one whole recording
             scene_graph (conceptagent_ros/SceneGraph) the names of the things and rooms in it become
                                                     Whisper's vocabulary (speech/hearing.py: Hearing.prompt)
Publishes:   command (std_msgs/String)               what was heard, when it is a command: for the planner node
             heard (conceptagent_ros/HeardSpeech)    every transcript with its confidence, accepted or not
             reply (std_msgs/String)                 what the robot says back (for a text-to-speech node):
                                                     "OK: ...", or why no task starts
Parameters:  model (string, whisper-base): a model of `conceptagent models list`, a CTranslate2 Whisper
             folder, or a transformers Whisper folder; threads (int, 0: CTranslate2's default);
             sample_rate (int, 16000) of the audio topics; vad (bool, true): false takes each audio
             message as one whole utterance; min_confidence (double, 0.45); max_no_speech (double, 0.6);
             min_chars (int, 2); vocabulary (string[], []): names Whisper should expect besides the scene
             graph's; scene_graph_topic (string, scene_graph; "" for none); autostart (bool, true)
"""
from __future__ import annotations

from typing import Any

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float32MultiArray, Int16MultiArray, String

from conceptagent_ros.msg import HeardSpeech, SceneGraph
from conceptagent_ros.ros.spin import autostart_lifecycle, run_node
from conceptagent_ros.speech.asr import DEFAULT_ASR_MODEL, load_transcriber
from conceptagent_ros.speech.audio import WHISPER_RATE, SpeechError, read_wav, resample
from conceptagent_ros.speech.hearing import Heard, Hearing, HearingSettings, names_of
from conceptagent_ros.speech.vad import UtteranceStream


class SpeechNode(LifecycleNode):
    __doc__ = __doc__

    def __init__(self, node_name: str = "speech", namespace: str = "", **kwargs: Any):
        super().__init__(node_name, namespace=namespace, **kwargs)
        d = ParameterDescriptor
        unit = [FloatingPointRange(from_value=0.0, to_value=1.0)]
        self.declare_parameter("model", DEFAULT_ASR_MODEL, d(description="ASR model: catalogue name or folder"))
        self.declare_parameter("threads", 0, d(description="CPU threads for Whisper; 0: CTranslate2's default"))
        self.declare_parameter("sample_rate", 16000, d(description="Hz of the audio topics",
                                                       integer_range=[IntegerRange(from_value=1000, to_value=192000)]))
        self.declare_parameter("vad", True, d(description="cut the audio topics into utterances with Silero VAD"))
        self.declare_parameter("min_confidence", HearingSettings.min_confidence,
                               d(description="less sure transcripts are refused", floating_point_range=unit))
        self.declare_parameter("max_no_speech", HearingSettings.max_no_speech,
                               d(description="Whisper's no-speech probability above which nothing was said",
                                 floating_point_range=unit))
        self.declare_parameter("min_chars", 2, d(description="shorter transcripts are not commands"))
        self.declare_parameter("vocabulary", [""], d(description="names Whisper should expect besides the scene graph's"))
        self.declare_parameter("scene_graph_topic", "scene_graph", d(description="whose names Whisper expects; '' for none"))
        self.declare_parameter("autostart", True, d(description="configure and activate at start"))
        self.hearing: Hearing | None = None
        self._scene_names: list[str] = []
        self.stream: UtteranceStream | None = None
        self._active = False
        self.command_pub = self.create_publisher(String, "command", 10)
        self.heard_pub = self.create_publisher(HeardSpeech, "heard", 10)
        self.reply_pub = self.create_publisher(String, "reply", 10)
        self.create_subscription(Float32MultiArray, "audio", lambda m: self._chunk(np.asarray(m.data, np.float32)), 50)
        self.create_subscription(Int16MultiArray, "audio_int16",
                                 lambda m: self._chunk(np.asarray(m.data, np.float32) / 32768.0), 50)
        self.create_subscription(String, "audio_file", self._file, 5)
        topic = self.get_parameter("scene_graph_topic").value
        if topic:
            self.create_subscription(SceneGraph, topic, self._scene_graph,
                                     QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))

    # -- lifecycle -------------------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        p = self.get_parameter
        model = p("model").value
        settings = HearingSettings(min_confidence=p("min_confidence").value, max_no_speech=p("max_no_speech").value,
                                   min_chars=p("min_chars").value, use_vad=p("vad").value)
        try:
            self.hearing = Hearing(load_transcriber(model, threads=p("threads").value), settings,
                                   vocabulary=self._vocabulary())
            self.stream = UtteranceStream(settings.vad) if settings.use_vad else None
        except SpeechError as e:
            self.get_logger().error(str(e))
            return TransitionCallbackReturn.FAILURE
        self.get_logger().info(f"ASR model loaded: {model}; voice activity: {'Silero VAD' if self.stream else 'off'}")
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._active = True
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._active = False
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.hearing, self.stream = None, None
        return TransitionCallbackReturn.SUCCESS

    # -- what Whisper should expect ------------------------------------------------------------------------
    def _vocabulary(self) -> list[str]:
        return names_of([*self.get_parameter("vocabulary").value, *self._scene_names])

    def _scene_graph(self, msg: SceneGraph) -> None:
        names = names_of([*(o.label for o in msg.objects), *(r.category for r in msg.rooms)])
        if names != self._scene_names:
            self._scene_names = names
            if self.hearing is not None:
                self.hearing.vocabulary = tuple(self._vocabulary())

    # -- audio -----------------------------------------------------------------------------------------
    def _ready(self) -> Hearing | None:
        if not self._active or self.hearing is None:
            self.get_logger().warning("audio ignored: the speech node is not active")
            return None
        return self.hearing

    def _file(self, msg: String) -> None:
        hearing = self._ready()
        if hearing is None:
            return
        try:
            samples, rate = read_wav(msg.data)
            self._publish(hearing.hear_recording(samples, rate), samples.size / rate)
        except SpeechError as e:
            self.get_logger().error(f"audio not heard: {e}")

    def _chunk(self, samples: np.ndarray) -> None:
        hearing = self._ready()
        if hearing is None:
            return
        rate = self.get_parameter("sample_rate").value
        try:
            if self.stream is None:  # no VAD: each message is one utterance
                self._publish(hearing.hear_recording(samples, rate), samples.size / rate)
                return
            if not np.all(np.isfinite(samples)):
                raise SpeechError("an audio chunk contains NaN or infinite samples; dropped")
            for utterance in self.stream.feed(resample(samples, rate, WHISPER_RATE)):
                self._publish(hearing.hear_utterance(utterance), utterance.size / WHISPER_RATE)
        except SpeechError as e:
            self.get_logger().error(f"audio not heard: {e}")

    def _publish(self, heard: Heard, audio_seconds: float) -> None:
        msg = HeardSpeech(text=heard.text, confidence=float(heard.confidence), accepted=heard.accepted,
                          reply=heard.reply, audio_seconds=float(audio_seconds), transcribe_seconds=float(heard.seconds))
        msg.header.stamp = self.get_clock().now().to_msg()
        self.heard_pub.publish(msg)
        self.reply_pub.publish(String(data=heard.reply))
        if heard.accepted:
            self.get_logger().info(f"heard: {heard.text} (confidence {heard.confidence:.2f})")
            self.command_pub.publish(String(data=heard.text))
        else:
            self.get_logger().info(f"not a command: {heard.reply}")


def main(args: list[str] | None = None) -> None:
    run_node(SpeechNode, threads=2, args=args, before_spin=autostart_lifecycle)
