"""Planner names, their options, and how each is wired to a language-model backend."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.llm.spec import LLMSpec
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.prompts import PlanExample
from conceptagent_ros.planning.proposal import ActionProposer
from conceptagent_ros.planning.roles import PlannerLLM
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.skills.contract import SkillLibrary

if TYPE_CHECKING:  # the simulated model is imported only where it is used
    from conceptagent_ros.planning.oracles.simulated import Oracle, WorldWords

# name -> (what it is, its options with defaults). Every planner also takes grounding=on|off.
PLANNERS: dict[str, tuple[str, dict[str, str]]] = {
    "react": ("iterative: one LLM call per action, precondition grounding on (ConceptAgent III-C)", {}),
    "base": ("the paper's base agent: iterative, actions run unchecked", {}),
    "mcts": ("LLM-guided MCTS with LLM self-critique (ConceptAgent III-B)",
             {"expansions": "5", "branching": "3", "c": "1.0", "depth": "8", "prune": "on", "reuse": "on",
              "prior": "auto"}),
    "llm-planner": ("LLM-Planner: kNN-retrieved examples, grounded re-planning",
                    {"examples": "9", "replan_every": "8", "bias": "on", "retriever": "auto", "bank": ""}),
    "tree-planner": ("Tree-Planner: plan sampling, action tree, grounded deciding, backtracking",
                     {"samples": "10", "temperature": "0.8", "max_replans": "10"}),
    "grounded-decoding": ("Grounded Decoding: token-level decoding under grounding functions",
                          {"beams": "1", "top_k": "10", "affordance": "on", "forbid": "", "prefer": "",
                           "prefer_instruction": "off"}),
}
GROUNDING_DEFAULT = {"base": "off"}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class PlannerSpec:
    name: str
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> PlannerSpec:
        """`mcts`, `mcts:expansions=10,prune=off`; unknown names and options are bad input."""
        name, _, rest = (text or "").strip().partition(":")
        name = name.strip().lower()
        if name not in PLANNERS:
            raise ConceptAgentError(f"unknown planner '{name}'; planners: {', '.join(PLANNERS)}")
        allowed = dict(PLANNERS[name][1], grounding=GROUNDING_DEFAULT.get(name, "on"))
        options: dict[str, str] = {}
        for item in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = item.partition("=")
            if not eq or key.strip() not in allowed:
                raise ConceptAgentError(f"planner option {item!r} not understood; {name} takes "
                                        + ", ".join(f"{k}={v or '...'}" for k, v in allowed.items()))
            options[key.strip()] = value.strip()
        for key, value in options.items():  # numeric options: finite, non-negative numbers, at parse time
            if _is_number(allowed[key]):
                if not _is_number(value) or not math.isfinite(float(value)) or float(value) < 0:
                    raise ConceptAgentError(f"planner option {key}={value!r} must be a number (finite, at least 0)")
        return cls(name, {**allowed, **options})

    def __str__(self) -> str:
        defaults = dict(PLANNERS[self.name][1], grounding=GROUNDING_DEFAULT.get(self.name, "on"))
        changed = [f"{k}={v}" for k, v in self.options.items() if defaults.get(k) != v]
        return self.name + (":" + ",".join(changed) if changed else "")

    def flag(self, key: str) -> bool:
        value = self.options[key].lower()
        if value not in ("on", "off", "true", "false", "1", "0", "yes", "no"):
            raise ConceptAgentError(f"planner option {key}={value}: use on or off")
        return value in ("on", "true", "1", "yes")

    def number(self, key: str, kind: type = int, low: float = 0) -> Any:
        try:
            value = kind(self.options[key])
        except ValueError:
            raise ConceptAgentError(f"planner option {key}={self.options[key]!r} must be a number") from None
        if not math.isfinite(value) or value < low:
            raise ConceptAgentError(f"planner option {key}={value} must be at least {low}")
        return value

    def words(self, key: str) -> tuple[str, ...]:
        return tuple(w for w in self.options.get(key, "").replace(";", " ").replace("+", " ").split() if w)

    @property
    def grounding(self) -> bool:
        return self.flag("grounding")


def _mcts_prior(spec: PlannerSpec) -> bool:
    """`prior=auto`: PUCT with the model's ranking as the prior where grounding is on, the paper's UCB1
    where it is off. The prior follows the model's first choice; grounding tells the model when that
    choice rests on a wrong belief, and without it nothing does, so UCB1's even exploration is what
    lets the critic find another way. Under simulated:realistic, 2 seeds of the moderate / hard tasks:
    with grounding PUCT 100% / 100% against UCB1's 98% / 98% (docs/benchmarks/mcts_prior), without
    it PUCT 40% / 38% against UCB1's 78% / 55% (docs/benchmarks/mcts_prior_ungrounded and the
    study's realistic section)."""
    if spec.options["prior"].lower() == "auto":
        return spec.grounding
    return spec.flag("prior")


@dataclass
class BuiltPlanner:
    proposer: ActionProposer
    grounding: bool  # the agent's precondition check before execution


@dataclass(frozen=True)
class SimulatedWorld:
    """For a world other than the household's: the oracle the simulated and offline models answer from,
    and the names their wrong beliefs are drawn over (planning/oracles/simulated.py)."""

    oracle: Oracle
    words: WorldWords | None = None  # None: the household's


def make_planner_llm(llm: LLMSpec, domain: PDDLDomain, skills: SkillLibrary, seed: int | str,
                     world: SimulatedWorld | None = None) -> PlannerLLM:
    """`seed` makes the simulated model's errors reproducible; give each task its own (seed/task)."""
    if llm.kind in ("offline", "simulated"):
        from conceptagent_ros.planning.oracles.simulated import SimulatedLLM, WorldWords, offline_llm

        oracle = world.oracle if world else None
        words = (world.words if world else None) or WorldWords()
        if llm.kind == "offline":
            return offline_llm(domain, skills, seed, oracle, words)
        return SimulatedLLM(domain, skills, llm.simulated.errors, seed, oracle=oracle, words=words)
    if llm.chat:
        from conceptagent_ros.llm.chat_factory import open_chat_model
        from conceptagent_ros.llm.logit_bias import tokenizer_from_env
        from conceptagent_ros.planning.chat_roles import ChatRoles

        return ChatRoles(open_chat_model(llm), tokenizer_from_env())
    raise ConceptAgentError(f"--llm {llm} serves only the grounded-decoding planner")


def build_planner(spec: PlannerSpec, llm: LLMSpec, domain: PDDLDomain, skills: SkillLibrary,
                  seed: int = 0, task_id: str = "", world: SimulatedWorld | None = None,
                  examples: Sequence[PlanExample] | None = None) -> BuiltPlanner:
    """`world`: the oracle of another world than the household's; `examples`: LLM-Planner's example
    bank (PlanExamples) in place of the household's."""
    verifier = PreconditionVerifier(domain, skills)
    label = str(spec)
    if spec.name == "grounded-decoding":
        return BuiltPlanner(_grounded_decoding(spec, llm, domain, skills, f"{seed}/{task_id}", verifier, label,
                                               world), spec.grounding)
    roles = make_planner_llm(llm, domain, skills, f"{seed}/{task_id}", world)
    proposer: ActionProposer
    if spec.name in ("react", "base"):
        from conceptagent_ros.planning.planners.iterative import IterativePlanner

        proposer = IterativePlanner(roles, label)
    elif spec.name == "mcts":
        from conceptagent_ros.planning.planners.mcts import MCTSConfig, MCTSPlanner

        config = MCTSConfig(expansions=spec.number("expansions", low=1), branching=spec.number("branching", low=1),
                            exploration=spec.number("c", float), max_depth=spec.number("depth", low=1),
                            prune=spec.flag("prune"), reuse=spec.flag("reuse"), prior=_mcts_prior(spec))
        proposer = MCTSPlanner(roles, verifier, EffectModel(domain), config, label)
    elif spec.name == "llm-planner":
        from conceptagent_ros.planning.planners.llm_planner import LLMPlanner, LLMPlannerConfig
        from conceptagent_ros.planning.planners.retrieval import ExampleRetriever, embedder_for, load_example_bank

        k = spec.number("examples")
        retriever = None
        if k > 0:
            embedder = embedder_for(spec.options["retriever"])
            bank = examples if examples is not None else load_example_bank(spec.options["bank"] or None)
            retriever = ExampleRetriever(bank, embedder)
        config_p = LLMPlannerConfig(examples=k, replan_every=spec.number("replan_every", low=1),
                                    logit_bias=spec.flag("bias"))
        proposer = LLMPlanner(roles, retriever, config_p, task_id, label)
    elif spec.name == "tree-planner":
        from conceptagent_ros.planning.planners.tree_planner import TreePlanner, TreePlannerConfig

        config_t = TreePlannerConfig(samples=spec.number("samples", low=1),
                                     temperature=spec.number("temperature", float),
                                     max_replans=spec.number("max_replans"))
        proposer = TreePlanner(roles, config_t, label)
    else:  # pragma: no cover - PLANNERS and this function list the same names
        raise ConceptAgentError(f"planner '{spec.name}' has no builder")
    return BuiltPlanner(proposer, spec.grounding)


def _grounded_decoding(spec: PlannerSpec, llm: LLMSpec, domain: PDDLDomain, skills: SkillLibrary, seed: str,
                       verifier: PreconditionVerifier, label: str, world: SimulatedWorld | None) -> ActionProposer:
    from conceptagent_ros.planning.planners.grounded_decoding.planner import (
        GroundedDecodingConfig,
        GroundedDecodingPlanner,
        TokenLMDecoder,
    )
    from conceptagent_ros.planning.proposal import DecisionContext, TokenUsage

    config = GroundedDecodingConfig(
        beams=spec.number("beams", low=1), top_k=spec.number("top_k", low=1), affordance=spec.flag("affordance"),
        forbidden=spec.words("forbid"), preferred=spec.words("prefer"),
        prefer_instruction_objects=spec.flag("prefer_instruction"))
    if llm.kind == "hf":
        from conceptagent_ros.planning.planners.grounded_decoding.hf import HFGroundedDecoder

        usage = TokenUsage()
        hf_decoder = HFGroundedDecoder(llm.model, usage)
        return GroundedDecodingPlanner(lambda _ctx: hf_decoder, usage, verifier, config, label)
    if llm.chat:  # the model's own next-token log-probabilities, from the server's /v1/completions
        from conceptagent_ros.llm.chat_factory import open_chat_model
        from conceptagent_ros.planning.planners.grounded_decoding.language_models import CompletionsLogprobLM

        usage = TokenUsage()
        chat = open_chat_model(llm)
        endpoint = TokenLMDecoder(CompletionsLogprobLM(chat.model, usage, chat.client))
        return GroundedDecodingPlanner(lambda _ctx: endpoint, usage, verifier, config, label)
    from conceptagent_ros.planning.planners.grounded_decoding.language_models import CandidateMixtureLM

    roles = make_planner_llm(llm, domain, skills, seed, world)

    def mixture(context: DecisionContext) -> TokenLMDecoder:
        vocabulary = [s.name for s in skills] + list(context.state.types)
        return TokenLMDecoder(CandidateMixtureLM(roles.propose_actions(context, 3).calls, vocabulary))

    return GroundedDecodingPlanner(mixture, roles.usage, verifier, config, label)
