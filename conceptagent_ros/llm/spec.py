"""`--llm SPEC`: which backend answers the planner's questions.

  offline                 no model: the oracle (symbolic planning over the belief), no errors (default)
  simulated[:RATES]       the oracle with seeded errors, for measuring planners (planning/oracles/simulated.py);
                          RATES is one number (default 0.2), kind=rate pairs, e.g.
                          simulated:hallucination=0.1,infeasible=0.1,order=0,critic=0.2,decide=0.1,
                          or a profile named in config/llm_profiles.yaml, e.g. simulated:realistic
  openai:MODEL            any OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY)
  local[:NAME]            a model fetched by `conceptagent models fetch`, served on CPU by llama.cpp,
                          which the project starts and stops (llm/local_server.py); NAME: a catalogue
                          name or a part of one (local:0.5b), default the catalogue's default
  hf:PATH                 a local transformers causal LM (grounded decoding only)
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

import yaml

from conceptagent_ros.errors import ConceptAgentError

KNOWN_KINDS = ("offline", "simulated", "openai", "local", "hf")
DEFAULT_SIMULATED_RATE = "0.2"


@dataclass(frozen=True)
class LLMSpec:
    """A parsed `--llm`: parsed once (parse_llm_spec) and passed on, so a simulated profile is read
    and checked once per run, not by every part that needs it."""

    kind: str
    model: str = ""
    profile: SimulatedProfile | None = field(default=None, compare=False)  # kind simulated: its rates and world

    def __str__(self) -> str:
        return self.kind if not self.model else f"{self.kind}:{self.model}"

    @property
    def chat(self) -> bool:
        """Answered by a chat server (any OpenAI-compatible one, or the local model's llama.cpp)."""
        return self.kind in ("openai", "local")

    @property
    def simulated(self) -> SimulatedProfile:
        """The simulated model's profile: as parsed, or resolved now for a spec built by hand."""
        if self.kind != "simulated":
            raise ConceptAgentError(f"--llm {self} is not a simulated model")
        return self.profile if self.profile is not None else simulated_profile(self.model)


def parse_llm_spec(text: str) -> LLMSpec:
    text = (text or "").strip()
    kind, _, model = text.partition(":")
    kind = kind.lower()
    if kind not in KNOWN_KINDS:
        raise ConceptAgentError(f"unknown --llm '{text}'; use one of: offline, simulated[:RATE], openai:MODEL, "
                                "local[:NAME], hf:PATH")
    if kind in ("openai", "hf") and not model:
        example = "gpt-4o-mini" if kind == "openai" else "/path/to/model"
        raise ConceptAgentError(f"--llm {kind} needs a model, e.g. --llm {kind}:{example}")
    if kind == "offline" and model:
        raise ConceptAgentError("--llm offline takes no model name")
    if kind == "local":
        from conceptagent_ros.llm.local_server import local_model_name

        return LLMSpec(kind, local_model_name(model))  # an unknown name is bad input now
    if kind == "simulated":
        model = model or DEFAULT_SIMULATED_RATE
        # a bad rate or profile is bad input now, not an error mid-benchmark
        return LLMSpec(kind, model, simulated_profile(model))
    return LLMSpec(kind, model)


@dataclass(frozen=True)
class ErrorRates:
    hallucination: float = 0.0
    infeasible: float = 0.0
    order: float = 0.0
    critic: float = 0.0  # standard deviation of the critic's score noise
    decide: float = 0.0
    # errors that depend on the episode so far (see planning/oracles/simulated.py)
    misconception: float = 0.0  # an episode starts with a wrong belief, acted on until contradicted
    relapse: float = 0.0  # a contradicted belief acted on again, per decision where it applies
    repeat_unexplained: float = 0.0  # the last call failed and nothing said why: tried again
    repeat_explained: float = 0.0  # the last call failed and its unsatisfied precondition was named
    premature_done: float = 0.0  # per decision: "done" before the task is
    loop: float = 0.0  # per decision: start alternating between the last two actions

    @classmethod
    def uniform(cls, rate: float) -> ErrorRates:
        """One knob: `rate` of proposed actions are wrong (a third of each kind); critic noise and
        deciding errors at the same rate."""
        return cls(rate / 3, rate / 3, rate / 3, rate, rate)

    @classmethod
    def parse(cls, text: str) -> ErrorRates:
        """`0.2`, or `hallucination=0.1,infeasible=0.05,order=0,critic=0.2,decide=0.1`."""
        text = text.strip()
        if not text:
            return cls()
        names = {f.name for f in fields(cls)}
        try:
            if "=" not in text:
                rates = cls.uniform(float(text))
            else:
                values: dict[str, float] = {}
                for item in text.split(","):
                    key, _, value = item.partition("=")
                    if key.strip() not in names:
                        raise ConceptAgentError(f"unknown error kind '{key.strip()}'; kinds: {', '.join(sorted(names))}")
                    values[key.strip()] = float(value)
                rates = cls(**values)
        except ValueError:
            raise ConceptAgentError(f"simulated error rates must be numbers: {text!r}") from None
        return rates.checked()

    def checked(self) -> ErrorRates:
        rates = self
        for f in fields(rates):
            if not 0.0 <= getattr(rates, f.name) <= 1.0:
                raise ConceptAgentError(f"simulated error rate {f.name}={getattr(rates, f.name)} is not in [0, 1]")
        if rates.hallucination + rates.infeasible + rates.order > 1.0:
            raise ConceptAgentError("simulated action error rates add up to more than 1")
        return rates

    def __str__(self) -> str:
        return ",".join(f"{f.name}={getattr(self, f.name):g}" for f in fields(self))


@dataclass(frozen=True)
class SimulatedProfile:
    """A simulated model's error rates, and the world it is studied in: `world` holds the profile's
    settings for the embedded world as they stand in the file (sim/world.py WorldRealism reads and
    checks them; the world's behaviour is the world's, the episode chooses it from the profile)."""

    name: str
    errors: ErrorRates
    world: tuple[tuple[str, bool | float], ...] = ()

    @property
    def world_settings(self) -> Mapping[str, bool | float]:
        return dict(self.world)


def simulated_profile(text: str) -> SimulatedProfile:
    """`simulated:TEXT`: a rate, kind=rate pairs (world as it is), or a profile's name."""
    text = text.strip()
    if not text or not text.replace("_", "").replace("-", "").isalpha():
        return SimulatedProfile(text or DEFAULT_SIMULATED_RATE, ErrorRates.parse(text))
    profiles = load_profiles()
    if text not in profiles:
        raise ConceptAgentError(f"unknown simulated profile '{text}'; profiles: {', '.join(sorted(profiles))} "
                                "(config/llm_profiles.yaml), or a rate such as simulated:0.2")
    return profiles[text]


def load_profiles(path: Path | None = None) -> dict[str, SimulatedProfile]:
    from conceptagent_ros.paths import config_dir

    path = path or config_dir() / "llm_profiles.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConceptAgentError(f"{path}: {exc}") from exc
    profiles = {}
    error_names = {f.name for f in fields(ErrorRates)}
    for name, entry in (data.get("profiles") or {}).items():
        entry = entry or {}
        errors, world = entry.get("errors") or {}, entry.get("world") or {}
        unknown = (set(errors) - error_names) | (set(entry) - {"errors", "world", "about"})
        if unknown:
            raise ConceptAgentError(f"{path}: profile '{name}': unknown field(s) {', '.join(sorted(unknown))}")
        if not isinstance(world, dict) or any(not isinstance(v, (bool, int, float)) for v in world.values()):
            raise ConceptAgentError(f"{path}: profile '{name}': world takes setting: value pairs (true/false or numbers)")
        try:
            rates = ErrorRates(**{k: float(v) for k, v in errors.items()}).checked()
        except (TypeError, ValueError) as exc:
            raise ConceptAgentError(f"{path}: profile '{name}': {exc}") from exc
        profiles[str(name)] = SimulatedProfile(str(name), rates, tuple(sorted((str(k), v) for k, v in world.items())))
    return profiles
