"""`conceptagent preconditions generate|evaluate`: LLM-written preconditions and their score."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.llm.spec import parse_llm_spec
from conceptagent_ros.paths import user_cache_dir
from conceptagent_ros.scene.loader import category_defaults
from conceptagent_ros.scene.symbolic import load_predicates
from conceptagent_ros.skills.contract import load_skill_library


def add_parsers(sub: Any) -> None:
    pre = sub.add_parser("preconditions", help="LLM-generated preconditions: generate, evaluate")
    pre_sub = pre.add_subparsers(dest="action", required=True)
    gen = pre_sub.add_parser("generate", help="ask an LLM for each skill's preconditions")
    gen.add_argument("--llm", required=True, help="openai:MODEL or local[:NAME]")
    gen.add_argument("--out", default="generated_preconditions.yaml")
    gen.add_argument("--skill", action="append", help="only these skills")
    gen.add_argument("--retries", type=int, default=2, help="retries with the parser's error per skill")
    gen.add_argument("--cache", help="cache directory (default ~/.cache/conceptagent/preconditions)")
    ev = pre_sub.add_parser("evaluate", help="accuracy and recall of generated preconditions against config/")
    ev.add_argument("generated", help="YAML written by `preconditions generate`")
    ev.add_argument("--samples", type=int, default=300, help="random states per comparison")
    pre.set_defaults(func=cmd_preconditions)


def cmd_preconditions(args: argparse.Namespace) -> int:
    skills = load_skill_library()
    predicates = load_predicates()
    types = sorted(set(category_defaults()) | {"room"})
    if args.action == "generate":
        from conceptagent_ros.llm.chat_factory import open_chat_model
        from conceptagent_ros.planning.preconditions.generate import PreconditionGenerator

        spec = parse_llm_spec(args.llm)
        if not spec.chat:
            raise ConceptAgentError("precondition generation needs a language model: use --llm openai:MODEL or "
                                    "--llm local (the offline backend cannot write preconditions)")
        cache = Path(args.cache) if args.cache else user_cache_dir() / "preconditions"
        generator = PreconditionGenerator(open_chat_model(spec), predicates, types,
                                          retries=args.retries, cache_dir=cache)
        results = generator.generate_all(skills, args.skill,
                                         progress=lambda s: print(f"generating preconditions for {s} ...", file=sys.stderr))
        data = {"model": str(spec), "preconditions": {r.skill: r.formula for r in results},
                "attempts": {r.skill: r.attempts for r in results}}
        Path(args.out).write_text(yaml.safe_dump(data, sort_keys=False, width=200))
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in results)
        print(f"wrote {len(results)} preconditions to {args.out} ({tokens} tokens)")
        return 0
    from conceptagent_ros.planning.preconditions.evaluate import score_preconditions
    from conceptagent_ros.planning.preconditions.schema import load_preconditions

    generated = load_preconditions(Path(args.generated), skills, predicates, types)
    if args.samples < 1:
        raise ConceptAgentError("--samples must be at least 1")
    score = score_preconditions(skills, generated, predicates, types, samples=args.samples)
    print("| skill | generated | ground truth | correct | wrong | missing |\n|---|---|---|---|---|---|")
    for s in score.skills:
        print(f"| {s.skill} | {s.generated} | {s.ground_truth} | {s.correct_generated} | {'; '.join(s.wrong) or '-'} "
              f"| {'; '.join(s.missing) or '-'} |")
    print(f"\naccuracy (correct generated / generated): {score.accuracy:.1%}  "
          f"recall (correct generated / ground truth): {score.recall:.1%}  "
          f"[{score.generated} generated, {score.ground_truth} ground truth; the paper: 97.4% / 88.1%]")
    return 0
