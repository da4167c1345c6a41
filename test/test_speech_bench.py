"""The speech benchmark's word error rate: the transcript and the text normalised alike (case,
punctuation, digits as words), then jiwer's edit distance over the reference's words."""
from __future__ import annotations

import pytest

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.speech_bench import word_error_rate


def test_what_whisper_writes_differently_from_the_text_is_no_error():
    assert word_error_rate("Put the apple on countertop 2.", "put the apple on countertop two") == 0.0
    assert word_error_rate("put the apple in the fridge", "Put the apple in the fridge!") == 0.0


@pytest.mark.parametrize(("heard", "errors"), [
    ("put the apple in fridge", 1),  # a word dropped
    ("put the apple in the fridge now", 1),  # one added
    ("put the apple in the bridge", 1),  # one misheard
    ("but the apples in the bridge", 3),
])
def test_each_word_missed_added_or_misheard_is_one_error_in_six(heard, errors):
    assert word_error_rate("put the apple in the fridge", heard) == pytest.approx(errors / 6)


def test_nothing_heard_is_every_word_missed_and_a_command_of_no_words_is_an_error():
    assert word_error_rate("open the fridge", "") == 1.0
    with pytest.raises(ConceptAgentError, match="no words"):
        word_error_rate("...", "open the fridge")
