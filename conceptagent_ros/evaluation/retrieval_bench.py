"""What LLM-Planner's example retriever hands the model: TF-IDF against MiniLM.

For every task of the example bank (config/examples/plan_bank.yaml), left out of the bank as in the
paper's leave-one-out protocol, its instruction retrieves k examples; the figure is how much of the
task's own plan those examples show: the share of its steps, as a skill and the kinds of its
arguments (`place(apple, fridge)`), that appear in some retrieved plan. The simulated model does not
learn from examples, so this, not a success rate, is what the retriever changes there.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from conceptagent_ros.planning.planners.retrieval import ExampleRetriever, embedder_for, load_example_bank
from conceptagent_ros.planning.prompts import PlanExample
from conceptagent_ros.skills.contract import SkillCall

_INSTANCE = re.compile(r"_\d+$")


@dataclass(frozen=True)
class RetrievalScore:
    retriever: str
    k: int
    tasks: int
    step_recall: float  # mean share of a task's steps (skill and argument kinds) shown by its examples
    same_first_step: float  # share of tasks whose nearest example starts as the task's plan does


def _kinds(call: SkillCall) -> tuple[str, ...]:
    return (call.skill, *(_INSTANCE.sub("", a) for a in call.args))


def score(retriever_name: str, k: int, bank: Sequence[PlanExample] | None = None) -> RetrievalScore:
    examples = list(bank if bank is not None else load_example_bank())
    retriever = ExampleRetriever(examples, embedder_for(retriever_name))
    recalls, first = [], 0
    for task in examples:
        steps = {_kinds(c) for c in task.plan if c.skill != "done"}
        if not steps:
            continue
        nearest = retriever.nearest(task.instruction, k, exclude_source=task.source)
        shown = {_kinds(c) for e in nearest for c in e.plan}
        recalls.append(len(steps & shown) / len(steps))
        first += bool(nearest) and _kinds(nearest[0].plan[0]) == _kinds(task.plan[0])
    return RetrievalScore(retriever_name, k, len(recalls), sum(recalls) / max(len(recalls), 1),
                          first / max(len(recalls), 1))
