"""Skill messages <-> core objects: SkillCall, and ExecuteSkill results <-> SkillOutcome with
nav2-style named error codes."""
from __future__ import annotations

from typing import Any

from conceptagent_ros.action import ExecuteSkill
from conceptagent_ros.msg import SkillCall as SkillCallMsg
from conceptagent_ros.skills.contract import SkillCall, SkillOutcome

Result = ExecuteSkill.Result

# SkillOutcome.failure <-> ExecuteSkill.Result error constants
FAILURE_CODES: dict[str | None, int] = {
    None: Result.NONE,
    "precondition": Result.PRECONDITION_FAILED,
    "physical": Result.PHYSICAL_FAILURE,
    "invalid": Result.INVALID_CALL,
    "canceled": Result.CANCELED,
    "timeout": Result.TIMEOUT,
    "unknown_object": Result.UNKNOWN_OBJECT,
    "unavailable": Result.SERVER_UNAVAILABLE,
    "navigation": Result.NAVIGATION_FAILED,
}
CODE_FAILURES = {code: failure for failure, code in FAILURE_CODES.items()}


def call_to_msg(call: SkillCall) -> SkillCallMsg:
    return SkillCallMsg(skill=call.skill, args=list(call.args))


def call_from_msg(msg: SkillCallMsg) -> SkillCall:
    return SkillCall(msg.skill, tuple(msg.args))


def outcome_to_result(outcome: SkillOutcome) -> ExecuteSkill.Result:
    result = Result()
    result.success = outcome.success
    result.error_code = FAILURE_CODES.get(outcome.failure, Result.PHYSICAL_FAILURE) if not outcome.success else Result.NONE
    result.error_msg = outcome.message
    return result


def outcome_from_result(call: SkillCall, result: ExecuteSkill.Result) -> SkillOutcome:
    if result.success:
        return SkillOutcome(call, True, result.error_msg or f"{call} succeeded")
    failure = CODE_FAILURES.get(result.error_code, "physical")
    return SkillOutcome(call, False, result.error_msg or f"{call} failed (error code {result.error_code})", failure)


def end_goal(goal_handle: Any, outcome: SkillOutcome) -> None:
    """End an ExecuteSkill goal as its outcome says: succeeded, canceled (only when a cancel was
    asked for: a server must not report CANCELED on its own), else aborted."""
    if outcome.success:
        goal_handle.succeed()
    elif outcome.failure == "canceled" and goal_handle.is_cancel_requested:
        goal_handle.canceled()
    else:
        goal_handle.abort()
