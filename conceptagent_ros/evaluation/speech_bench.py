"""The speech benchmark: commands said by flite's voices (some with noise mixed in at a stated SNR),
heard by Silero VAD and faster-whisper on Whisper base, and judged two ways: the word error rate of
the transcript against the text (jiwer, after the same normalisation on both sides), and whether the
no-model translator reads the same goal from the transcript as from the text (compared by meaning on
the command's scene, evaluation/goal_equivalence.py).

Sets: the built-in suites' instructions (easy, moderate, hard: evaluation) and the project's own spoken
commands (config/speech/spoken_commands.yaml: development, where the voices and noise were chosen).
A command whose text the translator refuses has no goal to match; it counts for the word error rate only.
"""
from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import yaml

from conceptagent_ros.errors import ConceptAgentError, InstructionError, TaskFileError
from conceptagent_ros.paths import config_dir
from conceptagent_ros.planning.free_text.known import NUMBER_WORDS
from conceptagent_ros.speech.audio import WHISPER_RATE, mix_at_snr, resample, write_wav

OWN_SET = "own"
BUILT_IN_SETS = ("easy", "moderate", "hard")


@dataclass(frozen=True)
class SpokenCommand:
    id: str
    set: str
    scene: str
    text: str


@dataclass(frozen=True)
class Condition:
    voice: str
    noise: str = ""  # "" clean, or "white" / "brown"
    snr_db: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.voice}" + (f" + {self.noise} noise at {self.snr_db:g} dB" if self.noise else " (clean)")

    @classmethod
    def parse_noise(cls, voice: str, text: str) -> Condition:
        """`white:20` -> white noise at 20 dB SNR."""
        kind, _, snr = text.partition(":")
        if kind not in ("white", "brown") or not snr:
            raise ConceptAgentError(f"noise {text!r}: write KIND:SNR_DB with KIND white or brown, e.g. white:20")
        try:
            return cls(voice, kind, float(snr))
        except ValueError as e:
            raise ConceptAgentError(f"noise {text!r}: the SNR must be a number of dB") from e


@dataclass(frozen=True)
class SpokenResult:
    id: str
    set: str
    scene: str
    condition: str
    text: str
    heard: str
    wer: float
    accepted: bool  # the hearing judged it a command
    reply: str
    confidence: float
    text_goal: str  # "" where the translator refuses the text
    heard_goal: str  # "" where the translator refuses the transcript (or it was not accepted)
    goal_same: bool | None  # None where the text has no goal
    seconds: float


def load_commands(sets: Iterable[str]) -> list[SpokenCommand]:
    from conceptagent_ros.evaluation.tasks import load_suite

    commands: list[SpokenCommand] = []
    for name in sets:
        if name == OWN_SET:
            path = config_dir() / "speech" / "spoken_commands.yaml"
            try:
                rows = yaml.safe_load(path.read_text(encoding="utf-8"))["commands"]
                commands += [SpokenCommand(str(r["id"]), OWN_SET, str(r["scene"]), str(r["text"])) for r in rows]
            except (OSError, yaml.YAMLError, KeyError, TypeError) as e:
                raise TaskFileError(f"{path}: not a list of commands with id, scene and text ({e})") from e
        elif name in BUILT_IN_SETS:
            commands += [SpokenCommand(t.id, name, t.scene, t.instruction) for t in load_suite(name)]
        else:
            raise ConceptAgentError(f"unknown set {name!r}; the sets: {', '.join((*BUILT_IN_SETS, OWN_SET))}")
    return commands


def normalise(text: str) -> str:
    """Lower case, words only, digits as words: "Put the apple on countertop 2." -> "put the apple on countertop two"."""
    words = re.findall(r"[a-z0-9']+", text.lower().replace("-", " "))
    return " ".join(NUMBER_WORDS.get(int(w), w) if w.isdigit() else w for w in words)


def word_error_rate(reference: str, hypothesis: str) -> float:
    import jiwer

    ref, hyp = normalise(reference), normalise(hypothesis)
    if not ref:
        raise ConceptAgentError("a command with no words has no word error rate")
    return float(jiwer.wer(ref, hyp)) if hyp else 1.0


def noise_of(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    white = rng.normal(0.0, 1.0, n)
    if kind == "white":
        return white.astype(np.float32)
    brown = np.cumsum(white)  # a low rumble (traffic, a fan); detrended so it does not drift off
    brown -= np.linspace(brown[0], brown[-1], n)
    return brown.astype(np.float32)


def spoken_audio(command: SpokenCommand, condition: Condition, seed: int = 0) -> np.ndarray:
    """The command said by the condition's voice at 16 kHz, with a quarter second of quiet either side."""
    from conceptagent_ros.speech.synthesis import say_with_flite

    samples, rate = say_with_flite(command.text, condition.voice)
    speech = np.concatenate([np.zeros(WHISPER_RATE // 4, np.float32), resample(samples, rate, WHISPER_RATE),
                             np.zeros(WHISPER_RATE // 4, np.float32)])
    if not condition.noise:
        return speech
    rng = np.random.default_rng([seed, sum(map(ord, command.id))])
    return mix_at_snr(speech, noise_of(condition.noise, speech.size, rng), condition.snr_db)


def run_speech_bench(commands: list[SpokenCommand], conditions: list[Condition], hearing,  # noqa: ANN001 - speech.hearing.Hearing
                     audio_dir: Path | None = None, vocabulary: bool = True,
                     on_result: Callable[[SpokenResult], None] | None = None) -> list[SpokenResult]:
    """`vocabulary`: Whisper is told the names of the things in the command's scene, as the speech node
    tells it those of the scene graph."""
    from conceptagent_ros.evaluation.goal_equivalence import SceneGoals
    from conceptagent_ros.speech.hearing import scene_vocabulary

    goals: dict[str, SceneGoals] = {}
    text_goals: dict[str, object] = {}
    results: list[SpokenResult] = []
    for command in commands:
        scene_goals = goals.setdefault(command.scene, SceneGoals(command.scene))
        try:
            text_goals[command.id] = scene_goals.translate(command.text)
        except InstructionError:
            text_goals[command.id] = None
    for condition in conditions:
        for command in commands:
            audio = spoken_audio(command, condition)
            if audio_dir is not None:
                write_wav(audio_dir / f"{command.id}_{condition.voice}{'_' + condition.noise if condition.noise else ''}"
                                      f"{f'{condition.snr_db:g}' if condition.noise else ''}.wav", audio, WHISPER_RATE)
            hearing.vocabulary = tuple(scene_vocabulary(command.scene)) if vocabulary else ()
            start = time.perf_counter()
            heard = hearing.hear_recording(audio, WHISPER_RATE)
            seconds = time.perf_counter() - start
            text_goal = text_goals[command.id]
            heard_goal = None
            if heard.accepted:
                try:
                    heard_goal = goals[command.scene].translate(heard.text)
                except InstructionError:
                    heard_goal = None
            same = None if text_goal is None else (
                heard_goal is not None and goals[command.scene].verdict(heard_goal, text_goal).same)  # type: ignore[arg-type]
            result = SpokenResult(command.id, command.set, command.scene, condition.label, command.text, heard.text,
                                  word_error_rate(command.text, heard.text), heard.accepted, heard.reply,
                                  float(heard.confidence), text_goal.text if text_goal is not None else "",  # type: ignore[attr-defined]
                                  heard_goal.text if heard_goal is not None else "", same, seconds)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


@dataclass(frozen=True)
class SummaryRow:
    set: str
    condition: str
    commands: int
    wer: float  # corpus word error rate: errors over all reference words
    goal_same: int
    with_goal: int  # commands whose text the translator reads
    refused: int  # the hearing refused them (unsure, nothing said, not a request)
    seconds_per_command: float

    @property
    def goal_share(self) -> float:
        return self.goal_same / self.with_goal if self.with_goal else float("nan")


def summarise(results: list[SpokenResult]) -> list[SummaryRow]:
    rows = []
    for key in dict.fromkeys((r.set, r.condition) for r in results):
        group = [r for r in results if (r.set, r.condition) == key]
        words = [len(normalise(r.text).split()) for r in group]
        wer = sum(r.wer * n for r, n in zip(group, words)) / max(1, sum(words))
        with_goal = [r for r in group if r.goal_same is not None]
        rows.append(SummaryRow(key[0], key[1], len(group), wer, sum(bool(r.goal_same) for r in with_goal),
                               len(with_goal), sum(not r.accepted for r in group),
                               sum(r.seconds for r in group) / len(group)))
    return rows


def summary_table(rows: list[SummaryRow]) -> str:
    from conceptagent_ros.evaluation.intervals import wilson

    lines = ["| set | voice, noise | commands | word error rate | goal the same as from the text [95% CI] | "
             "refused by the hearing | s per command |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        low, high = wilson(r.goal_same, r.with_goal) if r.with_goal else (float("nan"), float("nan"))
        lines.append(f"| {r.set} | {r.condition} | {r.commands} | {100 * r.wer:.1f}% | {r.goal_same}/{r.with_goal} = "
                     f"{100 * r.goal_share:.0f}% [{100 * low:.0f}, {100 * high:.0f}] | {r.refused} | "
                     f"{r.seconds_per_command:.2f} |")
    return "\n".join(lines)


def write_results(out: Path, results: list[SpokenResult], rows: list[SummaryRow], header: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.jsonl").write_text("".join(json.dumps(asdict(r)) + "\n" for r in results), encoding="utf-8")
    misheard = [r for r in results if r.goal_same is False or (r.goal_same is None and r.wer > 0)]
    lines = [header, "", summary_table(rows), "", "![goal the same, and word error rate](speech_bench.png)", "",
             "## Commands whose goal was not heard", "",
             "| set | id | voice, noise | said | heard | hearing's reply |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.set} | {r.id} | {r.condition} | {r.text} | {r.heard} | {r.reply if not r.accepted else ''} |"
              for r in misheard]
    (out / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _plot(out / "speech_bench.png", rows)


def _plot(path: Path, rows: list[SummaryRow]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r.set}\n{r.condition}" for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(rows)), 4.2))
    ax.bar(x - 0.2, [100 * r.goal_share for r in rows], 0.4, label="goal the same as from the text (%)")
    ax.bar(x + 0.2, [100 * r.wer for r in rows], 0.4, label="word error rate (%)")
    ax.axhline(95, color="grey", lw=0.8, ls="--")
    ax.set_xticks(x, labels, fontsize=7, rotation=30, ha="right")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8, loc="center right")
    ax.set_title("Spoken commands: flite voices heard by Whisper base (faster-whisper, int8, CPU)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
