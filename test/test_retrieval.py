"""LLM-Planner's example retrieval (TF-IDF, and MiniLM where `make test` fetched it) and the shipped
example bank."""
from __future__ import annotations

import os

import pytest

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.evaluation.tasks import load_suite
from conceptagent_ros.models.catalogue import CATALOGUE
from conceptagent_ros.models.sentence_encoder import fetched_minilm
from conceptagent_ros.models.store import is_fetched
from conceptagent_ros.planning.planners.retrieval import (
    EncoderEmbedder,
    ExampleRetriever,
    TfidfEmbedder,
    embedder_for,
    load_example_bank,
)
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


def test_minilm_is_the_default_where_fetched_and_finds_examples_that_share_no_word(monkeypatch, tmp_path):
    if not is_fetched(CATALOGUE["all-minilm-l6-v2"]):
        if os.environ.get("CONCEPTAGENT_REQUIRE_WORDS"):
            pytest.fail("all-minilm-l6-v2 is not fetched (conceptagent models fetch --only words)")
        pytest.skip("all-minilm-l6-v2 is not fetched")
    assert isinstance(embedder_for("auto"), EncoderEmbedder)
    bank = [example("put the apple in the fridge", "t1"), example("turn on the television", "t2"),
            example("slice the bread", "t3")]
    retriever = ExampleRetriever(bank, embedder_for("minilm"))
    assert retriever.nearest("switch the telly on", 1)[0].source == "t2"  # no word in common but "the"

    # not fetched: auto falls back to TF-IDF, minilm says how to fetch it
    monkeypatch.setenv("CONCEPTAGENT_MODELS", str(tmp_path))
    fetched_minilm.cache_clear()
    try:
        assert isinstance(embedder_for("auto"), TfidfEmbedder)
        with pytest.raises(ConfigError, match="conceptagent models fetch --model all-minilm-l6-v2"):
            embedder_for("minilm")
    finally:
        fetched_minilm.cache_clear()
