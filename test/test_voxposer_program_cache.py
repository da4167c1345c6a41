"""Generated programs are cached on disk by writer, LMP, query and the prompt as sent; the offline
composer's programs are never cached (a cached copy would outlive a fix to the composer)."""
from __future__ import annotations

from conceptagent_ros.voxposer.lmps import OfflineWriter, ProgramBook, ProgramCache


class CountingWriter:
    """A writer with a prompt, as ChatWriter has; counts the programs it is asked for."""

    name = "openai:counting"

    def __init__(self, head: str) -> None:
        self.head = head
        self.calls = 0

    def prompt(self, lmp: str, query: str, objects: list[str]) -> str:
        return f"{self.head}\nobjects = {objects!r}\n# Query: {query}."

    def write(self, lmp: str, query: str, objects: list[str], feedback: str = "") -> str:
        self.calls += 1
        return f"ret_val = {self.calls}\n"


def test_a_second_run_reads_the_program_from_disk(tmp_path):
    first, second = CountingWriter("v1"), CountingWriter("v1")
    ProgramBook(first, ProgramCache(tmp_path)).write("get_affordance_map", "a point", ["table"])
    code = ProgramBook(second, ProgramCache(tmp_path)).write("get_affordance_map", "a point", ["table"])
    assert (first.calls, second.calls) == (1, 0)
    assert code == "ret_val = 1\n"


def test_an_edited_prompt_or_other_objects_miss_the_cache(tmp_path):
    ProgramBook(CountingWriter("v1"), ProgramCache(tmp_path)).write("get_affordance_map", "a point", ["table"])
    edited = CountingWriter("v2")
    ProgramBook(edited, ProgramCache(tmp_path)).write("get_affordance_map", "a point", ["table"])
    other_objects = CountingWriter("v1")
    ProgramBook(other_objects, ProgramCache(tmp_path)).write("get_affordance_map", "a point", ["table", "mug"])
    assert (edited.calls, other_objects.calls) == (1, 1)


def test_feedback_bypasses_the_cache(tmp_path):
    ProgramBook(CountingWriter("v1"), ProgramCache(tmp_path)).write("get_affordance_map", "a point", ["table"])
    retry = CountingWriter("v1")
    ProgramBook(retry, ProgramCache(tmp_path)).write("get_affordance_map", "a point", ["table"], feedback="it raised")
    assert retry.calls == 1


def test_offline_programs_are_not_cached(tmp_path):
    book = ProgramBook(OfflineWriter(), ProgramCache(tmp_path))
    book.write("get_affordance_map", "a point at the back left corner of the table", ["table"])
    assert book.writes == 1
    assert not list(tmp_path.iterdir())
