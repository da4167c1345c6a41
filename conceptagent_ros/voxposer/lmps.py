"""Language model programs: who writes each LMP's code (an LLM or the offline composer), with a
disk cache, and the loop that runs a program in the sandbox, writing the nested programs it asks
for as it goes.

Each LMP has its own prompt file (config/prompts/voxposer/<lmp>.txt) and its own model and
temperature (config/voxposer.yaml, `lmps:`). The prompt ends with the objects in view and
"# Query: <query>."; the reply is the program (code fences stripped). A program that the sandbox
refuses or that raises goes back to the model once with the error; then the error stands.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.llm.base import ChatMessage
from conceptagent_ros.paths import config_dir
from conceptagent_ros.voxposer.api import SceneSnapshot
from conceptagent_ros.voxposer.offline import write_program
from conceptagent_ros.voxposer.sandbox import Sandbox, SandboxError

LMP_NAMES = ("planner", "composer", "parse_query_obj", "get_affordance_map", "get_avoidance_map", "get_rotation_map",
             "get_velocity_map", "get_gripper_map")
MAX_NESTED_PROGRAMS = 24


class ProgramWriter(Protocol):
    name: str

    def write(self, lmp: str, query: str, objects: list[str], feedback: str = "") -> str: ...


class OfflineWriter:
    """No LLM: the offline composer's programs (voxposer/offline.py)."""

    name = "offline"

    def write(self, lmp: str, query: str, objects: list[str], feedback: str = "") -> str:
        return write_program(lmp, query)


@dataclass(frozen=True)
class LmpSettings:
    model: str
    temperature: float = 0.0
    max_tokens: int = 512


def load_lmp_settings(default_model: str, path: Path | None = None) -> dict[str, LmpSettings]:
    """Per-LMP model and temperature from config/voxposer.yaml; `default` model stands for --llm's."""
    path = path or config_dir() / "voxposer.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    table = data.get("lmps", {})
    settings = {}
    for lmp in LMP_NAMES:
        entry = table.get(lmp, {}) or {}
        model = str(entry.get("model", "default"))
        settings[lmp] = LmpSettings(default_model if model == "default" else model, float(entry.get("temperature", 0.0)),
                                    int(entry.get("max_tokens", 512)))
    return settings


def strip_code(reply: str) -> str:
    fenced = re.findall(r"```(?:python)?\n(.*?)```", reply, flags=re.S)
    code = fenced[0] if fenced else reply
    # the model sometimes runs on into the next example
    code = code.split("# Query:")[0]
    return code.strip() + "\n"


class ChatWriter:
    """Programs from an OpenAI-compatible chat model, one prompt file per LMP."""

    def __init__(self, chat: Any, settings: dict[str, LmpSettings], prompts: Path | None = None) -> None:
        self.chat = chat
        self.settings = settings
        self.prompts = prompts or config_dir() / "prompts" / "voxposer"
        self.name = f"openai:{settings['composer'].model}"

    def prompt(self, lmp: str, query: str, objects: list[str]) -> str:
        path = self.prompts / f"{lmp}.txt"
        try:
            head = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"missing prompt file {path}: {exc}") from exc
        return f"{head.rstrip()}\n\nobjects = {objects!r}\n# Query: {query}.\n"

    def write(self, lmp: str, query: str, objects: list[str], feedback: str = "") -> str:
        s = self.settings[lmp]
        messages = [ChatMessage("system", "You write short Python programs against the API in the examples. "
                                          "Reply with code only."),
                    ChatMessage("user", self.prompt(lmp, query, objects))]
        if feedback:
            messages.append(ChatMessage("user", f"Your program failed: {feedback}\nWrite it again, fixed."))
        reply = self.chat.complete(messages, temperature=s.temperature, max_tokens=s.max_tokens)
        return strip_code(reply.text)


class ProgramCache:
    """Generated programs on disk, one JSON file per (writer, LMP, query, prompt) key; atomic writes."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def _path(self, key: dict[str, str]) -> Path | None:
        if self.root is None:
            return None
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
        return self.root / f"{digest}.json"

    def get(self, key: dict[str, str]) -> str | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            return str(json.loads(path.read_text(encoding="utf-8"))["code"])
        except (OSError, ValueError, KeyError):
            return None

    def put(self, key: dict[str, str], code: str) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({**key, "code": code}, out)
        os.replace(tmp, path)


@dataclass
class ProgramBook:
    """The programs written so far in one run: (LMP, query) -> code, and how many LLM calls they took."""

    writer: ProgramWriter
    cache: ProgramCache = field(default_factory=lambda: ProgramCache(None))
    programs: dict[tuple[str, str], str] = field(default_factory=dict)
    writes: int = 0
    log: list[str] = field(default_factory=list)

    def write(self, lmp: str, query: str, objects: list[str], feedback: str = "") -> str:
        key = self.cache_key(lmp, query, objects)
        code = None if feedback or key is None else self.cache.get(key)
        if code is None:
            code = self.writer.write(lmp, query, objects, feedback)
            self.writes += 1
            if key is not None:
                self.cache.put(key, code)
        self.programs[(lmp, query)] = code
        self.log.append(f"{lmp}({query!r}):\n{code}")
        return code

    def cache_key(self, lmp: str, query: str, objects: list[str]) -> dict[str, str] | None:
        """What a cached program depends on: the writer (model), the LMP, the query and the prompt as
        sent (an edited prompt file or other objects miss the cache). The offline composer is not
        cached: it costs nothing, and a cached copy would outlive a fix to it."""
        prompt = getattr(self.writer, "prompt", None)
        if prompt is None:
            return None
        digest = hashlib.sha256(prompt(lmp, query, objects).encode()).hexdigest()[:16]
        return {"writer": self.writer.name, "lmp": lmp, "query": query, "prompt": digest}

    def run(self, sandbox: Sandbox, source_of: tuple[str, str] | None, payload_for: Any, snapshot: SceneSnapshot) -> Any:
        """Run a program (or an evaluation) in the sandbox, writing the nested programs it asks for.

        A refused or raising nested program is rewritten once with the error as feedback (an LLM can
        fix it; the offline composer cannot and its error stands)."""
        objects = snapshot.names()
        retried: set[tuple[str, str]] = set()
        for _ in range(MAX_NESTED_PROGRAMS):
            source = self.programs[source_of] if source_of else "pass"
            try:
                return sandbox.run(source, source_of[0] if source_of else "evaluate", payload_for(self.programs))
            except SandboxError as exc:
                if exc.kind == "need_program":
                    lmp, query = json.loads(str(exc))
                    self.write(lmp, query, objects)
                    continue
                culprit = self._culprit(exc, source_of)
                if culprit is None or culprit in retried or isinstance(self.writer, OfflineWriter):
                    raise
                retried.add(culprit)
                self.write(culprit[0], culprit[1], objects, feedback=str(exc))
        raise SandboxError("raised", f"programs kept asking for more programs ({MAX_NESTED_PROGRAMS} written)")

    def _culprit(self, exc: SandboxError, source_of: tuple[str, str] | None) -> tuple[str, str] | None:
        name = str(exc).split(":", 1)[0]
        for key in reversed(list(self.programs)):
            if key[0] == name:
                return key
        return source_of
