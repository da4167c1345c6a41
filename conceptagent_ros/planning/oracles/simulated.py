"""A simulated language model: answers every planner role from the oracle, and errs on purpose.

It is a measuring instrument, not a stand-in for a model. The papers ask how each planner copes
with a language model that makes mistakes; no model is reachable here, so this backend makes the
mistakes at known, seeded rates and the benchmark measures what each planner does with them.

What it models, exactly:
- The oracle is the offline backend (llm/offline.py): Fast Downward over the robot's *belief*
  (what it has observed) plus common-sense priors on where things are. The oracle never sees
  hidden objects; like a good model, it knows where to look.
- Each action it proposes (a next action, a step of a sampled plan) is independently replaced,
  with the configured probabilities, by one of these errors:
  * hallucination: an argument swapped for an object id that was never observed (`apple_9`);
  * infeasible: a real skill on observed objects whose preconditions do not hold now;
  * order: a later step of the right plan in place of the next one.
- The critic scores a plan by how much of it follows the oracle's plan, the goal progress its
  declared effects predict, and its infeasible and surplus steps, plus Gaussian noise of the
  configured standard deviation (scores are in 0..1).
- Deciding (Tree-Planner) picks the option the oracle would run, else a feasible one, and with
  the `decide` probability a uniformly random option.

Errors that depend on the episode (all off unless a rate or a profile turns them on; the named
profiles are in config/llm_profiles.yaml):
- misconception: with this probability an episode starts with one wrong belief, drawn once at the
  first decision among those that apply and acted on at every decision where it matters:
  * "needs no opening": the container the plan opens is believed open; the model skips the
    `open` and goes straight to the next step (ConceptAgent's discussion of its base agent: it
    picks from closed receptacles and repeats it; EAI's affordance errors);
  * "which object": the instruction is read as naming another object of the same kind, which the
    model manipulates instead (EAI's goal interpretation errors; LLM-Planner's wrong-object errors).
  The belief holds until feedback in the model's history window contradicts it: a failure whose
  feedback names the cause and the object (an unsatisfied precondition, a refused `done` listing
  the unmet goal). Contradicted, it is still acted on with the `relapse` probability, and once the
  contradiction leaves the history window it holds again (LLM-Planner: replanned plans drift back).
- repetition: after a failed call the model proposes the same call again with `repeat_explained`
  if the failure named its cause (the grounding arm's unsatisfied preconditions, a world that
  explains), else with `repeat_unexplained` (Tree-Planner's and LLM-Planner's error analyses:
  without the reason, models retry; ConceptAgent: precondition feedback is what helps).
- premature_done: at each decision, "done" before the goal holds (EAI: premature termination).
- loop: at each decision, the model starts alternating between its last two executed actions for
  a few steps (geometric, mean 2; EAI and LLM-Planner report such cycles).
Irreversible outcomes live in the world (sim/world.py WorldRealism): a failed place can drop the
held object out of reach for good, so an infeasible action can cost the task.
- Token counts are those of the exact prompts the chat backend would send for the same question
  (planning/prompts.py) and of the JSON reply it answers with, at four characters a token.
- Its own compute (the oracle's planning) counts as language-model time, so planning overhead
  excludes it, as it excludes a real model's latency.

The history-dependent errors apply to the next action (`propose_actions` with nothing planned) and
to sampled plans (misconception on every step, repetition on the first, premature `done` cutting a
plan short); inside a search tree only the misconception and premature `done` apply.

It does not model in-context learning (retrieved examples change its token counts, not its
errors), sampling temperature, or a model's biases toward particular objects.
"""
from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from conceptagent_ros.llm.base import ChatMessage, estimate_tokens
from conceptagent_ros.llm.spec import ErrorRates
from conceptagent_ros.planning import prompts
from conceptagent_ros.planning.oracles.offline import OfflineBackend
from conceptagent_ros.planning.pddl.domain import PDDLDomain
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.proposal import Critique, DecisionContext, Proposal, StepRecord, TokenUsage
from conceptagent_ros.planning.roles import Candidates, Choice, PlanSamples, SamplingOptions
from conceptagent_ros.planning.verifier import PreconditionVerifier
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary

# failures whose feedback names the cause: the grounding arm's unsatisfied preconditions, a world
# that explains, a refused `done` listing what is unmet, an invalid call, an object lost
EXPLAINED = frozenset({"blocked", "precondition", "invalid", "premature_done", "irreversible"})


@dataclass(frozen=True)
class Misconception:
    kind: str  # "needs no opening" | "which object"
    subject: str  # the container believed open, or the object the instruction names
    stand_in: str = ""  # "which object": the object taken for it


class Oracle(Protocol):
    """What the simulated model knows: the right next action, and the plan it comes from."""

    def propose(self, context: DecisionContext) -> Proposal: ...

    @property
    def remaining_plan(self) -> tuple[SkillCall, ...]:
        """The plan being followed, its first step next (after the last `propose`)."""
        ...

    @property
    def plan_reaches_goal(self) -> bool: ...


@dataclass(frozen=True)
class WorldWords:
    """The names the wrong beliefs are drawn over: what marks a container that opens, and the
    predicate and skill of opening it (the household's; a benchmark's domain names them otherwise)."""

    openable: str = "openable"
    open: str = "open"


class SimulatedLLM:
    """Implements planning.roles.PlannerLLM. With all rates zero and `count_tokens=False`, it is the
    `offline` backend: the oracle answering every role, no model, nothing counted as LLM use.
    `oracle`: the household's offline backend unless given (another world's planner)."""

    def __init__(self, domain: PDDLDomain, skills: SkillLibrary, errors: ErrorRates | None = None,
                 seed: int | str = 0, count_tokens: bool = True, name: str = "simulated",
                 oracle: Oracle | None = None, words: WorldWords = WorldWords()):
        self.name = name
        self.errors = errors or ErrorRates()
        self.count_tokens = count_tokens
        self.usage = TokenUsage()
        self.skills = skills
        self.oracle: Oracle = oracle or OfflineBackend(domain, skills)
        self.words = words
        self.verifier = PreconditionVerifier(domain, skills)
        self.effects = EffectModel(domain)
        self.rng = random.Random(f"simulated-llm/{seed}")
        self._plan_for: tuple[int, tuple[StepRecord, ...]] | None = None
        self._plan: tuple[SkillCall, ...] = ()
        self._plan_complete = False
        self._believed: tuple[SkillCall, ...] = ()
        self.misconception: Misconception | None = None
        self._misconception_drawn = False
        self._misconception_due = False
        self._loop_left = 0
        self._loop: list[SkillCall] = []

    # -- the oracle -------------------------------------------------------------------------------
    def oracle_plan(self, context: DecisionContext) -> tuple[SkillCall, ...]:
        """The oracle's plan from the current belief, computed once per decision, as the model's
        misconception (if any, and not set aside at this decision) changes it. Computed again for the
        same decision only when the history it is asked with differs (a search adding feedback): by
        content, not length, since two feedback windows of one length can say different things."""
        key = (context.step, tuple(context.history))
        if key != self._plan_for:
            undrawn = self.misconception is None
            self._draw_misconception(context, ())
            active = self._misconception_active(context)
            self._plan_on(self._believed_context(context, active))
            if undrawn and self._misconception_due and self.misconception is None:
                self._draw_misconception(context, self._plan)  # one the plan shows: a container it opens
                active = self._misconception_active(context)
                if active and self.misconception is not None and self.misconception.kind == "needs no opening":
                    self._plan_on(self._believed_context(context, active))
            self._plan_for = key
            m = self.misconception
            self._believed = self._plan
            if active and m is not None and m.kind == "which object":
                self._believed = tuple(SkillCall(c.skill, tuple(m.stand_in if a == m.subject else a for a in c.args))
                                       for c in self._plan)
        return self._believed

    def _plan_on(self, context: DecisionContext) -> None:
        proposal = self.oracle.propose(context)
        rest = self.oracle.remaining_plan
        if proposal.call is None or proposal.call.skill == "done":
            self._plan, self._plan_complete = (SkillCall("done"),), True
        else:
            self._plan_complete = self.oracle.plan_reaches_goal
            self._plan = rest + ((SkillCall("done"),) if self._plan_complete else ())

    def _misconception_active(self, context: DecisionContext) -> bool:
        """Held at this decision: not contradicted in the history window, or relapsed into."""
        return self.misconception is not None and not (
            self._contradicted(context) and not self._chance(self.errors.relapse))

    def _believed_context(self, context: DecisionContext, active: bool) -> DecisionContext:
        """A container believed open is planned on as open: no opening, straight to using it."""
        m = self.misconception
        if active and m is not None and m.kind == "needs no opening":
            return replace(context, state=context.state.with_atoms(add=[(self.words.open, m.subject)]))
        return context

    def _predict(self, state: SymbolicState, calls: Sequence[SkillCall]) -> SymbolicState:
        for call in calls:
            if self.verifier.is_feasible(call, state):
                state = self.effects.apply(call, state)
        return state

    def _intended(self, context: DecisionContext, planned: Sequence[SkillCall]) -> tuple[SkillCall | None, int]:
        plan = self.oracle_plan(context)
        n = len(planned)
        if tuple(planned) == plan[:n] and n < len(plan):
            return plan[n], n
        return None, -1

    # -- errors -----------------------------------------------------------------------------------
    def _random_call(self, state: SymbolicState, feasible: bool | None, tries: int = 40) -> SkillCall | None:
        objects = list(state.types)
        specs = [s for s in self.skills if s.name != "done"]
        for _ in range(tries):
            spec = self.rng.choice(specs)
            call = SkillCall(spec.name, tuple(self.rng.choice(objects) for _ in range(spec.arity)))
            if feasible is None or self.verifier.is_feasible(call, state) == feasible:
                return call
        return None

    def _hallucinate(self, call: SkillCall, state: SymbolicState) -> SkillCall:
        if not call.args:
            return SkillCall("pick", (f"object_{self.rng.randint(90, 99)}",))
        i = self.rng.randrange(len(call.args))
        base = call.args[i].rsplit("_", 1)[0]
        fake = next(f"{base}_{k}" for k in range(self.rng.randint(7, 9), 99) if f"{base}_{k}" not in state.types)
        return SkillCall(call.skill, call.args[:i] + (fake,) + call.args[i + 1:])

    def _corrupt(self, call: SkillCall, later: Sequence[SkillCall], state: SymbolicState) -> SkillCall:
        """The call, or (with the configured probabilities) one of the modelled errors."""
        e, u = self.errors, self.rng.random()
        if u < e.hallucination:
            return self._hallucinate(call, state)
        if u < e.hallucination + e.infeasible:
            return self._random_call(state, feasible=False) or self._hallucinate(call, state)
        later = [c for c in later if c.skill != "done"]  # skipping ahead, not declaring victory
        if u < e.hallucination + e.infeasible + e.order and later:
            return later[min(len(later) - 1, self.rng.randrange(2))]
        return call

    # -- errors that depend on the episode ---------------------------------------------------------
    def _chance(self, rate: float) -> bool:
        """A draw only when the rate is on, so that profiles without a mechanism keep their sequence."""
        return rate > 0 and self.rng.random() < rate

    def _draw_misconception(self, context: DecisionContext, plan: Sequence[SkillCall]) -> None:
        """Whether the episode has a wrong belief is drawn at its first decision; which one, at the
        first decision where one applies: a closed container the goal names or the plan opens is
        believed open, or an object the goal names is taken for another of its kind in view."""
        if not self._misconception_drawn:
            self._misconception_drawn = True
            self._misconception_due = self._chance(self.errors.misconception)
        if not self._misconception_due or self.misconception is not None or context.goal is None:
            return
        state, named = context.state, set(re.findall(r"[\w-]+", context.goal.text))
        w = self.words
        opened = {c.args[-1] for c in plan if c.skill == w.open and c.args}
        options = [Misconception("needs no opening", c) for (p, *args) in sorted(state.atoms) if p == w.openable
                   for c in args if (w.open, c) not in state.atoms
                   and (c in named or state.types.get(c) in named or c in opened)]
        for x in sorted(named & set(state.types)):
            same = sorted(o for o, t in state.types.items() if t == state.types[x] and o != x)
            if same:
                options.append(Misconception("which object", x, self.rng.choice(same)))
        if options:
            self.misconception = self.rng.choice(options)

    def _contradicted(self, context: DecisionContext) -> bool:
        m = self.misconception
        return m is not None and any(
            r.failure in EXPLAINED and m.subject in r.feedback and (m.kind != "needs no opening" or "open" in r.feedback)
            for r in context.history)

    def _from_history(self, context: DecisionContext) -> SkillCall | None:
        """A loop's next action, or the last failed call again; None when neither happens."""
        executed = [r.call for r in context.history if r.executed and r.call is not None]
        if self._loop_left > 0:
            self._loop_left -= 1
            self._loop.reverse()
            return self._loop[0]
        if len(executed) >= 2 and executed[-1] != executed[-2] and self._chance(self.errors.loop):
            # back to the one before last, then the last, and so on (2 to 7 proposals)
            self._loop, self._loop_left = [executed[-2], executed[-1]], 1
            while self.rng.random() < 0.5 and self._loop_left < 6:
                self._loop_left += 1
            return self._loop[0]
        last = context.history[-1] if context.history else None
        if last is not None and not last.success and last.call is not None and last.call.skill != "done":
            rate = self.errors.repeat_explained if last.failure in EXPLAINED else self.errors.repeat_unexplained
            if self._chance(rate):
                return last.call
        return None

    # -- accounting -------------------------------------------------------------------------------
    def _account(self, messages: Callable[[], list[ChatMessage]], reply: object, seconds: float) -> tuple[int, int]:
        """Charge one call: the tokens of the prompt a chat model would read and of its reply, and
        `seconds` of the oracle's own work (measured before the prompt was rendered: rendering a
        prompt is the planner's work, as it is with a real model)."""
        if not self.count_tokens:
            return 0, 0
        prompt = sum(estimate_tokens(m.content) for m in messages())
        completion = estimate_tokens(json.dumps(reply))
        self.usage.add(prompt, completion, seconds)
        return prompt, completion

    # -- the roles --------------------------------------------------------------------------------
    def propose_actions(self, context: DecisionContext, k: int, planned: Sequence[SkillCall] = ()) -> Candidates:
        started = time.perf_counter()
        state = self._predict(context.state, planned) if planned else context.state
        intended, at = self._intended(context, planned)
        plan = self.oracle_plan(context)
        calls: list[SkillCall] = []
        repeated = self._from_history(context) if not planned else None
        if repeated is not None:
            calls.append(repeated)
        elif intended is not None:
            if intended.skill != "done" and self._chance(self.errors.premature_done):
                calls.append(SkillCall("done"))
            else:
                calls.append(self._corrupt(intended, plan[at + 1:], state))
        while len(calls) < k:  # alternatives: plausible (feasible) actions, now and then an error
            alternative = self._random_call(state, feasible=True)
            if alternative is None:
                break
            if alternative not in calls:
                calls.append(self._corrupt(alternative, (), state))
            elif self.rng.random() < 0.5:
                break
        calls = list(dict.fromkeys(calls))[:k]
        seconds = time.perf_counter() - started
        self._account(lambda: prompts.expand_messages(context, k, planned) if (k > 1 or planned)
                      else prompts.react_messages(context), {"thought": "simulated", "actions": [str(c) for c in calls]}, seconds)
        return Candidates(tuple(calls), raw=" | ".join(map(str, calls)), thought="simulated proposal")

    def critique(self, context: DecisionContext, plan: Sequence[SkillCall],
                 predicted: SymbolicState | None = None) -> Critique:
        # the simulated critic predicts the plan's outcome itself (with its own verifier and effects)
        started = time.perf_counter()
        reference = self.oracle_plan(context)
        agree = 0
        for mine, theirs in zip(plan, reference):
            if mine != theirs:
                break
            agree += 1
        state, infeasible = context.state, 0
        for call in plan:
            if call.skill == "done":
                continue
            if self.verifier.is_feasible(call, state):
                state = self.effects.apply(call, state)
            else:
                infeasible += 1
        goal = context.goal
        before = goal.progress(context.state) if goal else 0.0
        after = goal.progress(state) if goal else 0.0
        reached = goal.holds(state) if goal else False
        premature_done = bool(plan) and plan[-1].skill == "done" and not reached
        surplus = max(0, len(plan) - len(reference)) if self._plan_complete else 0
        score = (0.55 * agree / max(1, len(plan)) + 0.35 * max(0.0, after - before) + 0.1 * reached
                 - 0.2 * infeasible - 0.05 * surplus - 0.3 * premature_done)
        if self.errors.critic:
            score += self.rng.gauss(0.0, self.errors.critic)
        score = max(0.0, min(1.0, score))
        why = (f"{agree} of {len(plan)} steps follow a sound plan; predicted goal progress "
               f"{before:.0%} -> {after:.0%}" + (f"; {infeasible} infeasible step(s)" if infeasible else "")
               + ("; declares done before the goal holds" if premature_done else ""))
        seconds = time.perf_counter() - started
        prompt_tokens, completion_tokens = self._account(
            lambda: prompts.critic_messages(context, plan, predicted),
            {"justification": why, "score": round(score * 10, 1)}, seconds)
        return Critique(score, why, prompt_tokens, completion_tokens)

    def sample_plans(self, context: DecisionContext, options: SamplingOptions) -> PlanSamples:
        started = time.perf_counter()
        reference = self.oracle_plan(context)
        plans: list[tuple[SkillCall, ...]] = []
        for _ in range(max(1, options.n)):
            state, sample = context.state, []
            repeated = self._from_history(context)
            if repeated is not None:
                sample.append(repeated)
            for i, call in enumerate(reference):
                if call.skill != "done" and self._chance(self.errors.premature_done):
                    sample.append(SkillCall("done"))
                    break
                step = self._corrupt(call, reference[i + 1:], state)
                sample.append(step)
                if self.verifier.is_feasible(step, state):
                    state = self.effects.apply(step, state)
            plans.append(tuple(sample))
        seconds = time.perf_counter() - started
        if self.count_tokens:  # one request with n samples: the prompt is paid once
            messages = prompts.plan_messages(context, options.examples, options.feedback)
            prompt = sum(estimate_tokens(m.content) for m in messages)
            completion = sum(estimate_tokens(json.dumps({"plan": [str(c) for c in p]})) for p in plans)
            self.usage.add(prompt, completion, seconds)
        return PlanSamples(tuple(plans), tuple(" -> ".join(map(str, p)) for p in plans))

    def choose(self, context: DecisionContext, options: Sequence[SkillCall]) -> Choice:
        started = time.perf_counter()
        if not options:
            return Choice(None, error="no options")
        reference = self.oracle_plan(context)
        if self.errors.decide and self.rng.random() < self.errors.decide:
            index = self.rng.randrange(len(options))
        elif reference and reference[0] in options:
            index = list(options).index(reference[0])
        else:
            feasible = [i for i, c in enumerate(options) if self.verifier.is_feasible(c, context.state)]
            index = feasible[0] if feasible else 0
        seconds = time.perf_counter() - started
        self._account(lambda: prompts.decide_messages(context, options), {"thought": "simulated", "choice": index + 1}, seconds)
        return Choice(index, raw=str(options[index]))


def offline_llm(domain: PDDLDomain, skills: SkillLibrary, seed: int | str = 0, oracle: Oracle | None = None,
                words: WorldWords = WorldWords()) -> SimulatedLLM:
    """The `offline` backend: the oracle without errors; no model, so no calls or tokens counted."""
    return SimulatedLLM(domain, skills, ErrorRates(), seed, count_tokens=False, name="offline", oracle=oracle,
                        words=words)

