"""`bench --suite voxposer --out DIR` keeps an earlier run's templates when a later run reruns others."""
from __future__ import annotations

import csv

from conceptagent_ros.evaluation.voxposer_bench import write_bench_files


def row(template: int, seed: int, success: int) -> dict[str, object]:
    return {"template": template, "seed": seed, "instruction": f"task {template}", "success": success,
            "executor_success": success, "replans": 3, "replan_hz": 40.0, "seconds": 2.0, "verdict": "judged"}


def test_rerunning_one_template_replaces_only_its_rows(tmp_path):
    write_bench_files(tmp_path, {}, [row(1, 0, 1), row(1, 1, 1), row(2, 0, 0), row(2, 1, 1)], "offline", True)
    write_bench_files(tmp_path, {}, [row(2, 0, 1), row(2, 1, 1)], "offline", True)
    with open(tmp_path / "voxposer_episodes.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["template"], r["seed"], r["success"]) for r in rows] == [("1", "0", "1"), ("1", "1", "1"),
                                                                        ("2", "0", "1"), ("2", "1", "1")]
    report = (tmp_path / "voxposer.md").read_text()
    assert "| 1 | " in report and "| 2 | " in report and "2/2 (100%)" in report and "Failed episodes" not in report


def test_other_attributes_or_backend_start_afresh(tmp_path):
    write_bench_files(tmp_path, {}, [row(1, 0, 1)], "offline", True)
    write_bench_files(tmp_path, {}, [row(2, 0, 0)], "offline", False)  # unseen: not merged with seen
    report = (tmp_path / "voxposer.md").read_text()
    assert "unseen attributes" in report and "| 1 | " not in report and "0/1 (0%)" in report
