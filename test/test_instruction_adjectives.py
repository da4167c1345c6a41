"""Adjectives that pick one object of several, where scene objects carry attributes (colour, size)."""
from __future__ import annotations

import pytest

from conceptagent_ros.errors import InstructionError
from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode
from conceptagent_ros.planning.instruction import interpret_instruction

CATEGORIES = {"book", "sofa", "dresser", "pillow", "bed", "apple"}
TYPES = {"book_1": "book", "book_2": "book", "sofa_1": "sofa", "dresser_1": "dresser", "pillow_1": "pillow",
         "pillow_2": "pillow", "bed_1": "bed", "apple_1": "apple"}
ATTRIBUTES = {"book_1": {"colour": "red"}, "book_2": {"colour": "blue"},
              "pillow_1": {"colour": "green", "size": "small"}, "pillow_2": {"colour": "white", "size": "large"}}


def goal(text: str) -> str:
    return interpret_instruction(text, CATEGORIES, TYPES, ATTRIBUTES)


def test_an_adjective_picks_the_one_object_it_describes():
    assert goal("put the blue book on the sofa") == "(exists (?s0 - sofa) (in book_2 ?s0))"
    assert goal("put the large pillow on the sofa") == "(exists (?s0 - sofa) (in pillow_2 ?s0))"
    assert goal("put the small green pillow in the dresser") == "(exists (?d0 - dresser) (in pillow_1 ?d0))"


def test_a_or_one_of_a_kind_means_any_but_the_one_of_several_is_refused():
    assert goal("put a book on the sofa") == "(exists (?b0 - book ?s1 - sofa) (in ?b0 ?s1))"
    assert goal("put the apple on the sofa") == "(exists (?a0 - apple ?s1 - sofa) (in ?a0 ?s1))"
    with pytest.raises(InstructionError, match=r"'the book' could be any of 2 books \(book_1 \(red\); book_2 "):
        goal("put the book on the sofa")


def test_an_adjective_no_object_has_is_refused_with_what_there_is():
    with pytest.raises(InstructionError, match=r"no purple book here; the books known: book_1 \(red\), book_2 \(blue\)"):
        goal("put the purple book on the sofa")
    with pytest.raises(InstructionError, match="no large green pillow"):
        goal("put the large green pillow on the bed")


def test_a_colour_nothing_is_known_by_is_refused_not_dropped():
    """Without attributes a colour cannot pick anything: dropping it would be a goal the user did not
    ask for ("the red book" taken for any book)."""
    with pytest.raises(InstructionError, match="'red' in 'the red book': nothing here is known by such a word"):
        interpret_instruction("put the red book on the sofa", CATEGORIES, TYPES)


def test_the_apartment_scene_runs_an_adjective_instruction_to_the_right_object():
    result = run_episode(EpisodeSpec.of("put the blue book on the sofa", scene="apartment", planner="react",
                                     llm="offline", task_id="t"))
    assert result.success and "book_2" in result.goal
