"""Benchmarks survive a kill: a bench run killed with SIGKILL mid-way resumes to the same results a
clean run gives; a different configuration in the same folder is refused; summaries are atomic."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conceptagent_ros.atomic_files import write_atomic
from conceptagent_ros.evaluation.journal import EpisodeJournal, JournalError
from conceptagent_ros.evaluation.tasks import load_suite

SAME = ("task_id", "success", "goal", "unmet", "goal_progress")


@pytest.fixture
def tasks_file(tmp_path) -> Path:
    tasks = load_suite("easy")[:6]
    path = tmp_path / "tasks.yaml"
    path.write_text(yaml.safe_dump({"tasks": [{"id": t.id, "scene": t.scene, "instruction": t.instruction,
                                               "goal": t.goal} for t in tasks]}))
    return path


def bench(tasks: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "conceptagent_ros.cli", "bench", "--tasks", str(tasks), "--out", str(out), *extra]


def episodes(out: Path) -> list[dict]:
    rows = json.loads((out / "results.json").read_text())["episodes"]
    return sorted(({k: r.get(k) for k in SAME} | {"steps": r["stats"]["steps"], "stop": r["stats"]["stop_reason"]}
                   for r in rows), key=lambda r: r["task_id"])


def test_killed_bench_resumes_to_the_clean_result(tasks_file, tmp_path):
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    assert subprocess.run(bench(tasks_file, clean), capture_output=True, timeout=300).returncode == 0
    proc = subprocess.Popen(bench(tasks_file, killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = killed / "episodes.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if journal.is_file() and len(journal.read_text().splitlines()) >= 4:  # header + 3 episodes
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # no chance to clean up
    proc.wait()
    done_before = len(journal.read_text().splitlines()) - 1
    assert 3 <= done_before < 6 and not (killed / "results.json").exists()
    with journal.open("a") as f:
        f.write('{"key": ["", "offline", "react", "0", "easy", "cut sh')  # a line the kill cut short
    rerun = subprocess.run(bench(tasks_file, killed), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"Resuming: {done_before} episodes" in rerun.stderr
    assert rerun.stderr.count(" ok  ") + rerun.stderr.count(" FAIL ") == 6 - done_before  # only the rest ran
    assert episodes(killed) == episodes(clean)
    assert len(journal.read_text().splitlines()) == 7


def test_another_configuration_is_refused_and_no_resume_starts_over(tasks_file, tmp_path):
    out = tmp_path / "out"
    assert subprocess.run(bench(tasks_file, out), capture_output=True, timeout=300).returncode == 0
    (out / "traces" / "stale.jsonl").write_text("from an earlier run")
    other = subprocess.run(bench(tasks_file, out, "--max-steps", "30"), capture_output=True, text=True, timeout=60)
    assert other.returncode == 2 and "another configuration (differs in: max_steps)" in other.stderr
    assert len(other.stderr.strip().splitlines()) == 1
    fresh = subprocess.run(bench(tasks_file, out, "--max-steps", "30", "--no-resume"), capture_output=True, text=True,
                           timeout=300)
    assert fresh.returncode == 0 and "Resuming" not in fresh.stderr
    assert not (out / "traces" / "stale.jsonl").exists()  # no earlier run's traces beside the new ones


def test_out_naming_a_file_is_bad_input(tasks_file, tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("x")
    run = subprocess.run(bench(tasks_file, target), capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "is a file" in run.stderr and "Traceback" not in run.stderr


def test_atomic_write_leaves_the_old_file_when_interrupted(tmp_path, monkeypatch):
    path = tmp_path / "summary.csv"
    write_atomic(path, "old\n")

    def crash(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, "new\n")
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["summary.csv"]


def test_journal_from_another_version_is_refused(tmp_path):
    (tmp_path / "episodes.jsonl").write_text("not json\n")
    with pytest.raises(JournalError, match="not a results journal"):
        EpisodeJournal(tmp_path, {"a": 1})


def test_a_reworded_study_reading_resumes_and_a_changed_section_does_not(tmp_path):
    from conceptagent_ros.evaluation.study import load_study, study_fingerprint

    base = ("title: T\nsections:\n  - {id: s, title: S, about: A, planners: [react], llms: [offline], suites: [easy], "
            "seeds: 1, metrics: [success_rate]}\nreading: |\n  first words\n")
    path = tmp_path / "study.yaml"

    def fingerprint(text: str) -> dict:
        path.write_text(text)
        _, sections, overhead, _ = load_study(path)
        return study_fingerprint(sections, overhead)

    before = fingerprint(base)
    assert fingerprint(base.replace("first words", "better words").replace("title: T", "title: U")) == before
    assert fingerprint(base.replace("seeds: 1", "seeds: 2")) != before


def test_a_study_section_resumes_when_another_section_changes(tmp_path):
    from conceptagent_ros.evaluation.study import load_study, study_fingerprint

    def section(name: str, seeds: int) -> str:
        return (f"  - {{id: {name}, title: S, about: A, planners: [react], llms: [offline], suites: [easy], "
                f"seeds: {seeds}, metrics: [success_rate]}}\n")

    path = tmp_path / "study.yaml"

    def fingerprint(text: str, run: str) -> dict:
        path.write_text("title: T\nsections:\n" + text)
        _, sections, overhead, _ = load_study(path)
        return study_fingerprint([s for s in sections if s.id == run], overhead)

    before = fingerprint(section("a", 1) + section("b", 1), "a")
    assert fingerprint(section("a", 1) + section("b", 3), "a") == before
    assert fingerprint(section("a", 1), "a") == before
    assert fingerprint(section("a", 2) + section("b", 1), "a") != before
    assert fingerprint(section("a", 1) + section("b", 1), "b") != before


def test_a_study_section_runs_on_its_task_sample_and_refuses_tasks_its_suites_lack(tmp_path):
    from conceptagent_ros.errors import ConfigError
    from conceptagent_ros.evaluation.study import load_study, run_study, study_fingerprint

    section = ("title: T\nsections:\n  - {id: s, title: S, about: A, planners: [react], llms: [offline], "
               "suites: [easy], seeds: 1, metrics: [success_rate]TASKS}\n")
    path = tmp_path / "study.yaml"
    path.write_text(section.replace("TASKS", ""))
    whole = study_fingerprint(*load_study(path)[1:3])
    path.write_text(section.replace("TASKS", ", tasks: [easy_04, easy_13]"))
    assert study_fingerprint(*load_study(path)[1:3]) != whole  # a sample is another run
    run_study(path, tmp_path / "out", "test", stream=open(os.devnull, "w"))
    ran = {r["task_id"] for r in json.loads((tmp_path / "out" / "results.json").read_text())["episodes"]}
    assert ran == {"easy_04", "easy_13"}
    path.write_text(section.replace("TASKS", ", tasks: [easy_04, moderate_01]"))
    with pytest.raises(ConfigError, match="moderate_01"):
        load_study(path)
