"""LLM-Planner's example retrieval and the shipped example bank."""
from __future__ import annotations

from conceptagent_ros.evaluation.tasks import load_suite
from conceptagent_ros.planning.planners.retrieval import ExampleRetriever, load_example_bank
from conceptagent_ros.planning.prompts import PlanExample
from conceptagent_ros.skills.contract import SkillCall


def example(text: str, source: str = "") -> PlanExample:
    return PlanExample(text, (SkillCall("done"),), source)


def test_tfidf_knn_ranks_similar_instructions_first_and_leaves_the_task_out():
    bank = [example("cook an egg in the pan", "t1"), example("put the apple in the fridge", "t2"),
            example("put a tomato in the fridge", "t3"), example("water the plant", "t4")]
    retriever = ExampleRetriever(bank)
    nearest = retriever.nearest("put the pear in the fridge", 2)
    assert {e.source for e in nearest} == {"t2", "t3"}
    assert [e.source for e in retriever.nearest("put the apple in the fridge", 3, exclude_source="t2")][0] == "t3"
    assert "t2" not in {e.source for e in retriever.nearest("put the apple in the fridge", 4)}  # same text


def test_the_shipped_bank_covers_every_builtin_task_with_a_valid_plan():
    bank = load_example_bank()
    sources = {e.source for e in bank}
    tasks = [t for s in ("easy", "moderate", "hard") for t in load_suite(s)]
    assert {t.id for t in tasks} <= sources
    assert all(e.plan and e.plan[-1] == SkillCall("done") for e in bank)
