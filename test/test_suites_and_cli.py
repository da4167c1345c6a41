"""Every built-in task succeeds with the offline backend and grounding; the CLI keeps its contract."""
from __future__ import annotations

import json

import pytest

from conceptagent_ros.cli import main
from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode
from conceptagent_ros.evaluation.tasks import list_suites, load_suite

TASKS = [t for suite in ("easy", "moderate", "hard") for t in load_suite(suite)]


def test_suite_sizes():
    assert set(list_suites()) >= {"easy", "moderate", "hard"}
    assert [len(load_suite(s)) for s in ("easy", "moderate", "hard")] == [30, 20, 20]
    assert len({t.scene for t in load_suite("easy")}) == 3


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_offline_agent_solves_every_builtin_task(task):
    result = run_episode(EpisodeSpec.of(task.instruction, scene=task.scene, goal=task.goal,
                                     max_steps=task.max_steps or 40, task_id=task.id))
    assert result.success, (result.unmet, result.stats.stop_reason)
    assert result.stats.infeasible_executed == 0


def test_run_exit_codes_and_trace(tmp_path, capsys):
    trace = tmp_path / "trace.jsonl"
    assert main(["run", "put the apple in the fridge", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "place(apple_1, fridge_1)" in out and "SUCCESS" in out
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[-1]["action"] == "done()" and all("prompt_tokens" in r and "verdict" in r for r in records)
    assert main(["run", "put the apple in the fridge", "--max-steps", "2"]) == 1
    assert main(["run", ""]) == 2
    assert main(["run", "open the fridge", "--scene", "atlantis"]) == 2
    assert main(["run", "open the fridge", "--llm", "gpt5"]) == 2
    assert main(["run", "open the fridge", "--goal", "(open fridge_9)"]) == 2
    err = capsys.readouterr().err
    assert "unknown scene 'atlantis'" in err and "unknown --llm" in err and "fridge_9" in err


def test_bench_writes_json_and_markdown(tmp_path, capsys):
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text("tasks:\n  - {id: t1, scene: studio_kitchen, instruction: open the fridge, goal: (open fridge_1)}\n"
                     "  - {id: t2, scene: apartment, instruction: turn on the tv, goal: (is_on television_1)}\n")
    assert main(["bench", "--tasks", str(tasks), "--planner", "react", "--planner", "base", "--out", str(tmp_path / "r")]) == 0
    data = json.loads((tmp_path / "r" / "results.json").read_text())
    assert len(data["episodes"]) == 4 and all(e["success"] for e in data["episodes"])
    assert "| react |" in (tmp_path / "r" / "results.md").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks: [{id: x, scene: studio_kitchen}]")
    assert main(["bench", "--tasks", str(bad)]) == 2
    assert "missing instruction, goal" in capsys.readouterr().err


def test_bench_task_runs_only_the_tasks_named_and_refuses_ids_it_lacks(tmp_path, capsys):
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text("tasks:\n  - {id: t1, scene: studio_kitchen, instruction: open the fridge, goal: (open fridge_1)}\n"
                     "  - {id: t2, scene: apartment, instruction: turn on the tv, goal: (is_on television_1)}\n")
    assert main(["bench", "--tasks", str(tasks), "--task", "t2", "--out", str(tmp_path / "r")]) == 0
    episodes = json.loads((tmp_path / "r" / "results.json").read_text())["episodes"]
    assert [e["task_id"] for e in episodes] == ["t2"]
    assert main(["bench", "--suite", "easy", "--task", "easy_99"]) == 2
    assert "no task easy_99 in easy" in capsys.readouterr().err
    assert main(["bench", "--suite", "grasp", "--task", "easy_01"]) == 2  # objects, not tasks: not silently ignored
    assert "--task picks tasks" in capsys.readouterr().err


def test_scenes_command(capsys):
    assert main(["scenes"]) == 0 and "family_house" in capsys.readouterr().out
    assert main(["scenes", "apartment"]) == 0 and "credit_card_1" in capsys.readouterr().out


def test_scene_errors(tmp_path):
    from conceptagent_ros.errors import SceneError
    from conceptagent_ros.scene.loader import load_scene

    cases = {
        "objects: [{id: a, category: dragon, position: [0, 0]}]": "unknown category 'dragon'",
        "objects: [{id: a, category: apple, in: b}]": "names no object",
        "objects: [{id: a, category: apple, position: [.nan, 0]}]": "finite",
        "objects: [{id: A-1, category: apple, position: [0, 0]}]": "PDDL name",
        "objects: [{id: a, category: bowl, in: b}, {id: b, category: bowl, in: a}]": "cycle",
    }
    for body, message in cases.items():
        path = tmp_path / "s.yaml"
        path.write_text("rooms: [{id: r, bounds: [0, 0, 5, 5]}]\n" + body)
        with pytest.raises(SceneError, match=message):
            load_scene(str(path))
