"""The closed-loop agent (the paper's base agent, ReAct-style, with precondition grounding).

observe -> describe the state -> ask the proposer for the next skill call -> verify its
preconditions in the perceived state -> execute -> observe the outcome -> repeat, until `done` or
the step budget. With grounding on, an infeasible call is never executed: its unsatisfied
preconditions go back to the proposer. Malformed replies, hallucinated skills or objects and
skill failures are fed back as well; none of them ends the loop.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conceptagent_ros.planning.belief import Belief
from conceptagent_ros.planning.choices import DriveUse, Visited, grounded_choices
from conceptagent_ros.planning.goal import Goal
from conceptagent_ros.planning.pddl.effects import EffectModel
from conceptagent_ros.planning.proposal import ActionProposer, DecisionContext, Proposal, StepRecord
from conceptagent_ros.planning.robot import RobotInterface
from conceptagent_ros.planning.trace import TraceWriter
from conceptagent_ros.planning.verifier import PreconditionVerifier, Verdict
from conceptagent_ros.scene.symbolic import SymbolicState
from conceptagent_ros.skills.contract import SkillCall, SkillLibrary, SkillOutcome

MAX_TRACE_TEXT = 4000


@dataclass(frozen=True)
class AgentConfig:
    max_steps: int = 40
    precondition_grounding: bool = True
    max_consecutive_errors: int = 8  # unusable replies in a row before the agent stops
    history_window: int = 12  # steps of history the proposer sees
    max_call_failures: int = 3  # the same call failing this often is not executed again this episode
    max_skill_failures: int = 6  # a skill failing this often (any arguments, refusals included) ends it
    check_done: bool = True  # `done` is refused while the known goal does not hold in the belief
    # With grounding on, tell the proposer which calls it may make now (DecisionContext.choices): a
    # proposer with structured replies then cannot propose an infeasible call at all
    ground_choices: bool = True


@dataclass
class StepReport:
    """Everything about one decision; what `run` prints and the trace records."""

    step: int
    proposal: Proposal
    verdict: Verdict | None
    executed: bool
    outcome: SkillOutcome | None
    record: StepRecord
    new_objects: list[str] = field(default_factory=list)


@dataclass
class EpisodeStats:
    steps: int = 0
    executed: int = 0
    failed_executions: int = 0
    infeasible_proposed: int = 0  # proposals whose preconditions failed in the perceived state
    infeasible_executed: int = 0  # of those, executed anyway (grounding off)
    invalid_proposals: int = 0  # unknown skills or objects, wrong arity
    malformed_replies: int = 0
    declared_done: bool = False
    canceled: bool = False
    premature_done: int = 0  # `done` refused because the goal did not hold in the belief
    repeated_failures_refused: int = 0  # calls not executed because they had failed too often
    failing_skill: str = ""  # the skill that kept failing, when that ended the episode
    stop_reason: str = ""
    wall_seconds: float = 0.0
    llm_seconds: float = 0.0
    planning_seconds: float = 0.0  # inside the proposer (LLM calls included)
    acting_seconds: float = 0.0  # everything else: verifying, executing, observing, reporting

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Agent:
    def __init__(
        self,
        proposer: ActionProposer,
        verifier: PreconditionVerifier,
        skills: SkillLibrary,
        robot: RobotInterface,
        graph: Belief,
        config: AgentConfig = AgentConfig(),
        trace: TraceWriter | None = None,
        on_step: Callable[[StepReport], None] | None = None,
        cancel: threading.Event | None = None,
    ):
        self.proposer = proposer
        self.verifier = verifier
        self.skills = skills
        self.robot = robot
        self.graph = graph
        self.config = config
        self.trace = trace
        self.on_step = on_step
        # Set from another thread (a ROS cancel request, a preempting task); checked before every
        # decision. The robot interface sees the same event and stops a running skill.
        self.cancel = cancel or threading.Event()
        self.history: list[StepRecord] = []
        self.stats = EpisodeStats()
        self.call_failures: dict[SkillCall, list[str]] = {}  # call -> why it failed, each time
        self.skill_failures: dict[str, int] = {}
        self._effects: EffectModel | None = None  # built on the first step that offers choices
        self._drive_use: DriveUse | None = None
        # belief atoms -> the calls that succeeded there: in a state the robot has been in, the same
        # call again only leads where it led before (a small model drives back and forth)
        self.succeeded_in: dict[frozenset[Any], set[SkillCall]] = {}
        self.visited: list[frozenset[Any]] = []  # the belief's atoms at every decision so far, in order
        verifier.set_hint(graph.near_hint)

    def run(self, instruction: str, goal: Goal | None) -> EpisodeStats:
        start = time.perf_counter()
        self.graph.integrate(self.robot.observe(), 0)
        consecutive_errors = 0
        for step in range(1, self.config.max_steps + 1):
            if self.cancel.is_set():
                self._canceled()
                break
            report = self._decide_and_act(step, instruction, goal)
            self.history.append(report.record)
            self.stats.steps = step
            self._emit(report)
            if report.record.call is not None and report.record.call.skill == "done" and report.verdict is not None \
                    and not report.verdict.invalid_call and report.record.success:
                self.stats.declared_done = True
                self.stats.stop_reason = "the agent declared the task done"
                break
            if report.record.failure == "canceled" or self.cancel.is_set():
                self._canceled()
                break
            if self._skill_kept_failing(report):
                break
            consecutive_errors = consecutive_errors + 1 if report.record.failure in ("malformed", "invalid") else 0
            if consecutive_errors >= self.config.max_consecutive_errors:
                self.stats.stop_reason = f"{consecutive_errors} unusable replies in a row"
                break
        else:
            self.stats.stop_reason = f"step budget of {self.config.max_steps} used up"
        self.stats.wall_seconds = time.perf_counter() - start
        self.stats.acting_seconds = self.stats.wall_seconds - self.stats.planning_seconds
        return self.stats

    def _skill_kept_failing(self, report: StepReport) -> bool:
        call = report.record.call
        failed_run = report.executed and not report.record.success and report.record.failure not in ("canceled",)
        if call is None or not (failed_run or report.record.failure == "repeated"):
            return False
        count = self.skill_failures[call.skill] = self.skill_failures.get(call.skill, 0) + 1
        if count < self.config.max_skill_failures:
            return False
        self.stats.failing_skill = call.skill
        self.stats.stop_reason = (f"the skill {call.skill} kept failing ({count} failures; last: "
                                  f"{report.record.feedback[:300]})")
        return True

    def _canceled(self) -> None:
        self.stats.canceled = True
        self.stats.stop_reason = "canceled"

    def _decide_and_act(self, step: int, instruction: str, goal: Goal | None) -> StepReport:
        state = self.graph.symbolic_state()
        self.visited.append(state.atoms)
        context = DecisionContext(
            instruction=instruction, goal=goal, state=state, state_text=self.graph.describe(),
            graph=self.graph, skills=self.skills,
            history=tuple(self.history[-self.config.history_window:]), step=step,
            offer=self._offer(state, goal),
        )
        started = time.perf_counter()
        proposal = self.proposer.propose(context)
        self.stats.planning_seconds += time.perf_counter() - started
        self.stats.llm_seconds += proposal.llm_seconds
        call = proposal.call
        if call is None:
            self.stats.malformed_replies += 1
            feedback = f"Your reply could not be used: {proposal.error or 'no action found'}"
            return StepReport(step, proposal, None, False, None,
                              StepRecord(step, None, False, False, feedback, "malformed"))
        verdict = self.verifier.verify(call, state)
        if verdict.invalid_call:
            self.stats.invalid_proposals += 1
        elif not verdict.feasible:
            self.stats.infeasible_proposed += 1
        if call.skill == "done" and not verdict.invalid_call:
            unmet = goal.unmet(state) if goal is not None and self.config.check_done else []
            if unmet:
                self.stats.premature_done += 1
                feedback = (f"done() refused: the task is not finished; still unmet: {'; '.join(unmet)}. "
                            "Keep going, or explore to find what is missing")
                return StepReport(step, proposal, verdict, False, None,
                                  StepRecord(step, call, False, False, feedback, "premature_done"))
            record = StepRecord(step, call, False, True, "the agent declared the task done")
            return StepReport(step, proposal, verdict, False, None, record)
        failures = self.call_failures.get(call, [])
        if len(failures) >= self.config.max_call_failures:
            self.stats.repeated_failures_refused += 1
            feedback = (f"{call} was not executed: it already failed {len(failures)} times this episode "
                        f"(last: {failures[-1][:200]}); it will not be tried again. Try another way")
            return StepReport(step, proposal, verdict, False, None, StepRecord(step, call, False, False, feedback, "repeated"))
        if self.config.precondition_grounding and not verdict.feasible:
            failure = "invalid" if verdict.invalid_call else "blocked"
            return StepReport(step, proposal, verdict, False, None,
                              StepRecord(step, call, False, False, verdict.feedback(), failure))
        if not verdict.feasible and not verdict.invalid_call:
            self.stats.infeasible_executed += 1
        outcome = self.robot.execute(call)
        self.stats.executed += 1
        repeated = ""
        if not outcome.success:
            self.stats.failed_executions += 1
            if outcome.failure != "canceled":
                failures = self.call_failures.setdefault(call, [])
                failures.append(outcome.message)
                if len(failures) > 1:
                    repeated = (f" (failure {len(failures)} of {call}; after {self.config.max_call_failures} "
                                "it is not tried again)")
        new = self.graph.integrate(self.robot.observe(), step)
        # a call that succeeded and changed nothing the robot believes (a second navigate_to the same
        # place) is said to be so: a model told only "succeeded" tends to repeat it
        unchanged = outcome.success and not new and self.graph.symbolic_state().atoms == state.atoms
        if outcome.success:
            self.succeeded_in.setdefault(state.atoms, set()).add(call)
        feedback = outcome.message + (" but changed nothing: it was already so" if unchanged else "") + repeated
        record = StepRecord(step, call, True, outcome.success, feedback, outcome.failure, tuple(new))
        return StepReport(step, proposal, verdict, True, outcome, record, new)

    def _offer(self, state: SymbolicState, goal: Goal | None) -> Callable[[], tuple[SkillCall, ...] | None]:
        """What the proposer may choose from (planning/choices.py), worked out when first read, on
        the agent's record as it is now; None with grounding off."""
        grounded = self.config.precondition_grounding and self.config.ground_choices
        seen = len(self.visited)  # the list only grows: its first `seen` entries are the record as of now
        succeeded = frozenset(self.succeeded_in.get(state.atoms, ()))
        given_up = frozenset(c for c, why in self.call_failures.items() if len(why) >= self.config.max_call_failures)

        def offer() -> tuple[SkillCall, ...] | None:
            if not grounded:
                return None
            if self._effects is None:
                self._effects = EffectModel(self.verifier.domain)
            if goal is not None and self.config.check_done and not goal.unmet(state):
                return (SkillCall("done"),)
            done_allowed = goal is None or not self.config.check_done

            def allowed(call: SkillCall) -> bool:
                return (call.skill != "done" or done_allowed) and call not in succeeded and call not in given_up

            if self._drive_use is None:
                self._drive_use = DriveUse(self.verifier.is_feasible, [(s.name, s.arity) for s in self.verifier.skills])
            choices = grounded_choices(self.verifier.feasible_calls(state), state, self._effects, allowed,
                                       Visited(self.visited[:seen]), self._drive_use,
                                       goal.things(state) if goal is not None else ())
            return choices or None  # nothing left: the proposer says what it would do, and is told why not
        return offer

    def _emit(self, report: StepReport) -> None:
        if self.trace is not None:
            self.trace.write({
                "step": report.step,
                "action": str(report.record.call) if report.record.call else None,
                "raw_reply": report.proposal.raw[:MAX_TRACE_TEXT],
                "reply_error": report.proposal.error,
                "prompt_tokens": report.proposal.prompt_tokens,
                "completion_tokens": report.proposal.completion_tokens,
                "llm_seconds": round(report.proposal.llm_seconds, 4),
                "verdict": report.verdict.to_json() if report.verdict else None,
                "executed": report.executed,
                "outcome": report.outcome.to_json() if report.outcome else None,
                "feedback": report.record.said()[:MAX_TRACE_TEXT],
                "new_objects": report.new_objects,
            })
        if self.on_step is not None:
            self.on_step(report)
