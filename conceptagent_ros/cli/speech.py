"""`conceptagent hear FILE.wav` (what the robot hears in a recording, and what it would say back) and
`conceptagent speech-bench` (spoken commands: word error rate, and the goal heard against the text's)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from conceptagent_ros.cli.common import EXIT_FAILED, EXIT_OK, printable
from conceptagent_ros.errors import ConceptAgentError

BAR_GOAL_SHARE = 0.95  # spoken built-in easy instructions, every voice: goal the same as from the text
BAR_WER = 0.10  # clean speech


def add_parsers(sub: Any) -> None:
    hear = sub.add_parser("hear", help="transcribe a spoken command (WAV) and say whether the robot would act on it")
    hear.add_argument("wav", help="a PCM WAV file")
    hear.add_argument("--asr-model", default="whisper-base", help="a speech model name or folder")
    hear.add_argument("--scene", help="tell Whisper the names of the things in this scene (name or YAML)")
    hear.set_defaults(func=cmd_hear)

    bench = sub.add_parser("speech-bench", help="spoken commands said by flite voices and heard by Whisper base: "
                                                "word error rate and goals against the text's")
    bench.add_argument("--sets", default="easy,moderate,hard,own",
                       help="comma list of easy, moderate, hard (the built-in suites' instructions) and own "
                            "(config/speech/spoken_commands.yaml, the development set)")
    bench.add_argument("--voices", default="rms,kal", help="flite voices (slt, rms, kal, awb), each on every command "
                                                                "(default: the two best on the development set)")
    bench.add_argument("--noise", action="append", default=None, metavar="KIND:SNR_DB",
                       help="noise mixed in for the first voice, e.g. white:20 or brown:10 (repeatable; "
                            "default white:20 and brown:10)")
    bench.add_argument("--asr-model", default="whisper-base")
    bench.add_argument("--no-vocabulary", action="store_true",
                       help="do not tell Whisper the names of the things in the command's scene")
    bench.add_argument("--limit", type=int, default=0, help="only the first N commands of each set")
    bench.add_argument("--out", help="write README.md (tables and misheard commands), results.jsonl and a plot here")
    bench.add_argument("--keep-audio", action="store_true", help="with --out: keep every clip as a WAV file")
    bench.set_defaults(func=cmd_speech_bench)


def cmd_hear(args: argparse.Namespace) -> int:
    from conceptagent_ros.speech.asr import load_transcriber
    from conceptagent_ros.speech.audio import read_wav
    from conceptagent_ros.speech.hearing import Hearing, scene_vocabulary

    samples, rate = read_wav(args.wav)
    vocabulary = scene_vocabulary(args.scene) if args.scene else ()
    heard = Hearing(load_transcriber(args.asr_model), vocabulary=vocabulary).hear_recording(samples, rate)
    print(json.dumps({"text": heard.text, "confidence": round(heard.confidence, 3), "command": heard.accepted,
                      "reply": heard.reply, "seconds": round(heard.seconds, 2)}))
    return EXIT_OK if heard.accepted else EXIT_FAILED


def cmd_speech_bench(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.speech_bench import (
        Condition,
        SpokenResult,
        load_commands,
        run_speech_bench,
        summarise,
        summary_table,
        write_results,
    )
    from conceptagent_ros.speech.asr import load_transcriber
    from conceptagent_ros.speech.hearing import Hearing
    from conceptagent_ros.speech.synthesis import FLITE_VOICES, flite_available

    if not flite_available():
        raise ConceptAgentError("the speech benchmark says its commands with flite: apt-get install flite "
                                "(or tools/ensure_flite.sh)")
    voices = [v.strip() for v in args.voices.split(",") if v.strip()]
    unknown = [v for v in voices if v not in FLITE_VOICES]
    if not voices or unknown:
        raise ConceptAgentError(f"--voices: choose among {', '.join(FLITE_VOICES)}")
    conditions = [Condition(v) for v in voices]
    conditions += [Condition.parse_noise(voices[0], n) for n in (args.noise or ["white:20", "brown:10"])]
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    commands = load_commands(sets)
    if args.limit > 0:
        commands = [c for s in sets for c in [c for c in commands if c.set == s][: args.limit]]
    out = Path(args.out) if args.out else None
    audio_dir = None
    if out is not None and args.keep_audio:
        audio_dir = out / "audio"
        audio_dir.mkdir(parents=True, exist_ok=True)
    hearing = Hearing(load_transcriber(args.asr_model))
    total = len(commands) * len(conditions)
    print(f"{len(commands)} commands ({', '.join(sets)}) x {len(conditions)} conditions: "
          f"{'; '.join(c.label for c in conditions)}; {total} clips; Whisper "
          f"{'not told' if args.no_vocabulary else 'told'} the names of the things in each scene", flush=True)
    done = [0]

    def show(r: SpokenResult) -> None:
        done[0] += 1
        mark = {True: "same goal", False: "OTHER GOAL", None: "no goal in the text"}[r.goal_same]
        print(f"[{done[0]}/{total}] {r.id} {r.condition}: {printable(r.heard) or '(nothing)'} -- "
              f"WER {100 * r.wer:.0f}%, {mark}{'' if r.accepted else ', refused'}", flush=True)

    results = run_speech_bench(commands, conditions, hearing, audio_dir, vocabulary=not args.no_vocabulary,
                               on_result=show)
    rows = summarise(results)
    print(summary_table(rows))
    easy_clean = [r for r in rows if r.set == "easy" and r.condition.endswith("(clean)")]
    holds = all(r.goal_share >= BAR_GOAL_SHARE and r.wer <= BAR_WER for r in easy_clean) if easy_clean else None
    if holds is not None:
        print(f"Bar (easy, every clean voice: goal the same >= {BAR_GOAL_SHARE:.0%}, WER <= {BAR_WER:.0%}): "
              f"{'holds' if holds else 'NOT MET'}")
    if out is not None:
        command_line = "conceptagent speech-bench " + " ".join(printable(a) for a in sys.argv[2:])
        write_results(out, results, rows, f"# Spoken commands\n\n    {command_line}\n\nWhisper base (faster-whisper, "
                      f"int8, CPU) behind Silero VAD; voices by flite.")
        print(f"Written to {out}/README.md")
    return EXIT_OK if holds in (None, True) else EXIT_FAILED
