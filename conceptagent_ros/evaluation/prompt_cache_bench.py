"""What the local model's RAM prompt cache (llm/prompt_cache.py) buys and costs, on the planner it
is for: MCTS alternates its expansion and its critic, whose prompts evict each other's prefix from
the one key-value cache llama.cpp keeps. The same MCTS episode runs twice on the same model, the
server started afresh each time, without the cache and with it; printed: seconds per call of each,
their ratio, the calls made, and each server's peak resident memory (VmHWM).

    python -m conceptagent_ros.evaluation.prompt_cache_bench --task easy_01 --steps 3 --cache-mb 3072

The figures are this machine's, measured in the same run; nothing is asserted here."""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode
from conceptagent_ros.evaluation.tasks import load_suite, only_tasks
from conceptagent_ros.llm import local_server


@dataclass
class Arm:
    cache_mb: int
    llm_calls: int
    seconds_per_call: float
    peak_rss_mb: float  # the server process's VmHWM when the episode ended
    success: bool


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_arm(task_id: str, suite: str, steps: int, llm: str, cache_mb: int) -> Arm:
    task = only_tasks(load_suite(suite), [task_id], suite)[0]
    local_server.stop_all()
    os.environ["CONCEPTAGENT_LOCAL_CACHE_MB"] = str(cache_mb)  # read as the server is started
    try:
        result = run_episode(EpisodeSpec.of(instruction=task.instruction, scene=task.scene, goal=task.goal,
                                            planner="mcts", llm=llm, seed=0, max_steps=steps))
        server = local_server.shared_server(llm.partition(":")[2])  # the episode's, still running
        peak = _peak_rss_mb(server.process.pid)
    finally:
        local_server.stop_all()
        os.environ.pop("CONCEPTAGENT_LOCAL_CACHE_MB", None)
    per_call = result.llm_seconds / result.llm_calls if result.llm_calls else float("nan")
    return Arm(cache_mb, result.llm_calls, per_call, peak, result.success)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="prompt_cache_bench")
    parser.add_argument("--task", default="easy_01")
    parser.add_argument("--suite", default="easy")
    parser.add_argument("--steps", type=int, default=3, help="actions of the episode (each several MCTS calls)")
    parser.add_argument("--llm", default="local", help="local[:NAME]")
    parser.add_argument("--cache-mb", type=int, default=3072, help="the cache's capacity in the second run")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.cache_mb <= 0:
        parser.error("--cache-mb must be positive (the first run is the one without a cache)")
    arms = []
    for cache_mb in (0, args.cache_mb):
        print(f"[prompt cache bench] {args.task}, {args.steps} steps of MCTS on {args.llm}, "
              f"cache {cache_mb or 'off'}{' MiB' if cache_mb else ''} ...", file=sys.stderr, flush=True)
        arms.append(run_arm(args.task, args.suite, args.steps, args.llm, cache_mb))
    print(f"{'cache':>10} {'calls':>6} {'s/call':>8} {'peak RSS MiB':>13} {'success':>8}")
    for arm in arms:
        label = f"{arm.cache_mb} MiB" if arm.cache_mb else "off"
        print(f"{label:>10} {arm.llm_calls:>6} {arm.seconds_per_call:>8.2f} {arm.peak_rss_mb:>13.0f} {str(arm.success):>8}")
    off, on = arms
    print(f"seconds per call with the cache / without: {on.seconds_per_call / off.seconds_per_call:.2f}; "
          f"peak memory: {on.peak_rss_mb / off.peak_rss_mb:.2f}x")
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(a) for a in arms], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
