"""Planner messages from core objects: PlanStep from a StepReport, TaskStatus lines."""
from __future__ import annotations

from builtin_interfaces.msg import Time

from conceptagent_ros.msg import PlanStep, TaskStatus
from conceptagent_ros.planning.agent import StepReport
from conceptagent_ros.ros.conversions.skills import call_to_msg

UINT32_MAX = 2**32 - 1


def step_to_msg(report: StepReport, task_id: str, stamp: Time) -> PlanStep:
    msg = PlanStep()
    msg.stamp, msg.task_id, msg.step = stamp, task_id, report.step
    if report.record.call is not None:
        msg.call = call_to_msg(report.record.call)
    msg.executed, msg.success = report.executed, report.record.success
    msg.failure = report.record.failure or ""
    msg.feedback = report.record.said()
    msg.new_objects = list(report.new_objects)
    msg.prompt_tokens = min(report.proposal.prompt_tokens, UINT32_MAX)
    msg.completion_tokens = min(report.proposal.completion_tokens, UINT32_MAX)
    return msg


def status_msg(state: int, stamp: Time, task_id: str = "", instruction: str = "", goal: str = "",
               step: int = 0, message: str = "") -> TaskStatus:
    msg = TaskStatus()
    msg.header.stamp = stamp
    msg.state, msg.task_id, msg.instruction, msg.goal = state, task_id, instruction, goal
    msg.step, msg.message = step, message
    return msg


STATE_NAMES = {TaskStatus.IDLE: "idle", TaskStatus.RUNNING: "running", TaskStatus.SUCCEEDED: "succeeded",
               TaskStatus.FAILED: "failed", TaskStatus.CANCELED: "canceled", TaskStatus.REJECTED: "rejected",
               TaskStatus.PREEMPTED: "preempted"}
