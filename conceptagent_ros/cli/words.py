"""`conceptagent phrasing-bench`: how the no-model translator reads instructions, right, refused and
wrong per set (the built-in suites and the phrasing development set), with the word models fetched
(MiniLM for unknown words, spaCy for polite frames) and, with --compare, without them.
`conceptagent retrieval-bench`: what LLM-Planner's example retriever shows, TF-IDF against MiniLM."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from conceptagent_ros.cli.common import EXIT_FAILED, EXIT_OK, printable

BAR_EASY, BAR_MODERATE_HARD = 0.90, 0.80  # built-in suites, right; and never wrong


def add_parsers(sub: Any) -> None:
    bench = sub.add_parser("phrasing-bench", help="the no-model translator on the built-in suites and the phrasing "
                                                  "development set: right, refused, wrong per set")
    bench.add_argument("--sets", default="easy,moderate,hard,dev",
                       help="comma list of easy, moderate, hard (the built-in suites) and dev "
                            "(config/words/phrasings_dev.yaml)")
    bench.add_argument("--compare", action="store_true",
                       help="also read every instruction without the word models (CONCEPTAGENT_WORD_MODELS=off)")
    bench.add_argument("--show", choices=["none", "refused", "wrong", "all"], default="wrong",
                       help="print these readings one by one (default: the wrong ones)")
    bench.add_argument("--json", action="store_true", help="print the tables as JSON")
    bench.set_defaults(func=cmd_phrasing_bench)

    ret = sub.add_parser("retrieval-bench", help="LLM-Planner's example retriever, TF-IDF against MiniLM: how much "
                                                 "of each task's plan its retrieved examples show (leave-one-out)")
    ret.add_argument("--retrievers", default="tfidf,minilm", help="comma list of tfidf, minilm, or encoder folders")
    ret.add_argument("--k", type=int, default=9, help="examples retrieved per task (LLM-Planner's default: 9)")
    ret.set_defaults(func=cmd_retrieval_bench)


def cmd_phrasing_bench(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.phrasing_bench import (
        BUILT_IN_SUITES,
        Reading,
        dev_phrasings,
        read_all,
        suite_phrasings,
        tally,
    )

    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in (*BUILT_IN_SUITES, "dev")]
    if unknown:
        print(f"unknown set(s) {', '.join(unknown)}; choose from easy, moderate, hard, dev", file=sys.stderr)
        return 2
    phrasings = suite_phrasings([s for s in sets if s in BUILT_IN_SUITES])
    if "dev" in sets:
        phrasings += dev_phrasings()

    def show(reading: Reading) -> None:
        if args.show == "all" or args.show == reading.outcome:
            print(printable(f"  {reading.outcome:7s} {reading.phrasing.id:22s} {reading.phrasing.say!r} -> "
                            f"{reading.read}"), file=sys.stderr)

    runs = {"with word models": None, "without": "off"} if args.compare else {"with word models": None}
    tables = {}
    for label, setting in runs.items():
        previous = os.environ.get("CONCEPTAGENT_WORD_MODELS")
        if setting is not None:
            os.environ["CONCEPTAGENT_WORD_MODELS"] = setting
        try:
            print(f"== {label}", file=sys.stderr)
            tables[label] = tally(read_all(phrasings, show))
        finally:
            if setting is not None:
                if previous is None:
                    os.environ.pop("CONCEPTAGENT_WORD_MODELS", None)
                else:
                    os.environ["CONCEPTAGENT_WORD_MODELS"] = previous
    if args.json:
        print(json.dumps(tables, indent=2))
    else:
        for label, table in tables.items():
            print(f"\n{label}\n| set | right | refused | wrong | total |\n|---|---|---|---|---|")
            for name, row in table.items():
                print(f"| {name} | {row['right']} ({row['right'] / row['total']:.0%}) | {row['refused']} | "
                      f"{row['wrong']} | {row['total']} |")
    main = tables["with word models"]
    bars = [main[s]["wrong"] == 0 for s in main] + [
        main[s]["right"] / main[s]["total"] >= (BAR_EASY if s == "easy" else BAR_MODERATE_HARD)
        for s in main if s in BUILT_IN_SUITES]
    return EXIT_OK if all(bars) else EXIT_FAILED


def cmd_retrieval_bench(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.retrieval_bench import score

    print(f"| retriever | tasks | steps shown by the {args.k} examples | nearest starts as the task |\n|---|---|---|---|")
    for name in [r.strip() for r in args.retrievers.split(",") if r.strip()]:
        s = score(name, args.k)
        print(f"| {name} | {s.tasks} | {s.step_recall:.1%} | {s.same_first_step:.1%} |")
    return EXIT_OK
