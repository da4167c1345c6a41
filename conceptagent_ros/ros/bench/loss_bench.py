"""What a lossy link does to a task: `conceptagent ros bench --loss PERCENT`.

The robot stand-in runs in one network namespace and the planner in another (see two_hosts), the
operator's client beside the planner. The same task runs again and again, the stand-in reset
before each, alternating a clean link and one that drops PERCENT % of UDP packets each way
(nftables), so drift on the machine hits both sides alike. It prints each run, then the median and
worst wall time of the ExecuteTask goal at 0 % and at PERCENT %, and their ratios against the bar:
median at most 2x and worst at most 3x the loss-free median at 5 % loss, 4x at 20 %.

Needs root (network namespaces) and nft; it says so and stops where either is missing.
"""
from __future__ import annotations

import csv
import json
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.ros.bench.two_hosts import TwoHosts, two_hosts, why_no_loss
from conceptagent_ros.ros.graph_process import stop

TIMER_MODULE = "conceptagent_ros.ros.bench.task_timer"


@dataclass(frozen=True)
class LossBar:
    """The issue's bar at a loss level: ratios to the loss-free median."""

    median: float
    worst: float | None


def bar_for(percent: float) -> LossBar:
    if percent <= 5.0:
        return LossBar(median=2.0, worst=3.0)
    if percent <= 20.0:
        return LossBar(median=4.0, worst=None)
    return LossBar(median=float("inf"), worst=None)  # beyond what the bar speaks of: figures only


@dataclass(frozen=True)
class LossRun:
    loss_percent: float
    run: int
    seconds: float
    steps: int
    success: bool
    dropped_packets: int
    error: str = ""


class TaskTimer:
    """The client process on the planner's host, one request and one JSON answer at a time."""

    def __init__(self, hosts: TwoHosts):
        command = hosts.command(hosts.planner_ns, sys.executable, "-m", TIMER_MODULE)
        self.process = subprocess.Popen(command, env=hosts.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)
        ready = self._answer()
        if not ready.get("ok"):
            raise ConceptAgentError(f"the client on the planner's host did not come up: {ready.get('error')}")

    def _answer(self) -> dict:
        assert self.process.stdout is not None
        started = time.monotonic()
        line = self.process.stdout.readline()  # the timer bounds each of its own waits
        if not line:
            raise ConceptAgentError(f"the client on the planner's host exited (code {self.process.poll()}) after "
                                    f"{time.monotonic() - started:.0f} s")
        return json.loads(line)

    def ask(self, request: str) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write(request + "\n")
        self.process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def measure(loss_percent: float, runs: int, instruction: str, scene: str,
            environment: dict[str, str] | None = None) -> list[LossRun]:
    """`runs` tasks on a clean link and `runs` at `loss_percent`, interleaved, after one warm-up."""
    if not 0.0 < loss_percent < 100.0:
        raise ConceptAgentError(f"--loss is a percentage above 0 and below 100; got {loss_percent:g}")
    why = why_no_loss()
    if why:
        raise ConceptAgentError(f"ros bench --loss needs packet loss: {why}")
    results: list[LossRun] = []
    with two_hosts(extra_env=environment) as hosts:
        robot = hosts.start(hosts.robot_ns, "ros", "up", "--nodes", "robot", "--scene", scene)
        planner = hosts.start(hosts.planner_ns, "ros", "up", "--nodes", "planner")
        timer: TaskTimer | None = None
        try:
            timer = TaskTimer(hosts)
            schedule = [0.0] + [level for _ in range(runs) for level in (0.0, loss_percent)]
            for index, level in enumerate(schedule):
                hosts.set_loss(0.0)  # the reset is not what is measured
                if not timer.ask("reset").get("ok"):
                    raise ConceptAgentError("the robot stand-in did not reset")
                hosts.set_loss(level)
                before = hosts.dropped_packets() if level > 0 else 0
                answer = timer.ask(f"task {instruction}")
                dropped = (hosts.dropped_packets() - before) if level > 0 else 0
                run = LossRun(level, index, float(answer.get("seconds") or 0.0), int(answer.get("steps") or 0),
                              bool(answer.get("ok")), dropped, str(answer.get("error") or ""))
                if index == 0:
                    print(f"warm-up: {run.seconds:.2f} s ({'ok' if run.success else run.error})", flush=True)
                    continue
                results.append(run)
                verdict = "ok" if run.success else f"FAILED: {run.error[:120]}"
                print(f"run {index:>2}  loss {level:>4.1f} %  {run.seconds:6.2f} s  {run.steps} steps  "
                      f"{run.dropped_packets:>4} packets dropped  {verdict}", flush=True)
        finally:
            hosts.set_loss(0.0)
            if timer is not None:
                timer.close()
            stop(planner, signal.SIGTERM)  # `ros up` stops its graph on SIGTERM as on Ctrl-C
            stop(robot, signal.SIGTERM)
    return results


@dataclass(frozen=True)
class LossSummary:
    loss_percent: float
    clean_median: float
    clean_worst: float
    lossy_median: float
    lossy_worst: float
    failures: int

    @property
    def median_ratio(self) -> float:
        return self.lossy_median / self.clean_median

    @property
    def worst_ratio(self) -> float:
        return self.lossy_worst / self.clean_median

    def meets_bar(self) -> bool:
        bar = bar_for(self.loss_percent)
        return (self.failures == 0 and self.median_ratio <= bar.median
                and (bar.worst is None or self.worst_ratio <= bar.worst))


def summarize(runs: list[LossRun], loss_percent: float) -> LossSummary:
    clean = [r.seconds for r in runs if r.loss_percent == 0.0 and r.success]
    lossy = [r.seconds for r in runs if r.loss_percent == loss_percent and r.success]
    if not clean or not lossy:
        raise ConceptAgentError("no successful run on one side: nothing to compare")
    return LossSummary(loss_percent, statistics.median(clean), max(clean), statistics.median(lossy), max(lossy),
                       sum(not r.success for r in runs))


def summary_table(summary: LossSummary, runs: int) -> str:
    bar = bar_for(summary.loss_percent)
    worst_bar = f"{bar.worst:.0f}x" if bar.worst is not None else "-"
    return "\n".join([
        "| link | runs | median (s) | worst (s) | median / clean | worst / clean median |",
        "|---|---:|---:|---:|---:|---:|",
        f"| no loss | {runs} | {summary.clean_median:.2f} | {summary.clean_worst:.2f} | 1.00 | "
        f"{summary.clean_worst / summary.clean_median:.2f} |",
        f"| {summary.loss_percent:g} % UDP dropped each way | {runs} | {summary.lossy_median:.2f} | "
        f"{summary.lossy_worst:.2f} | **{summary.median_ratio:.2f}** (bar {bar.median:g}x) | "
        f"**{summary.worst_ratio:.2f}** (bar {worst_bar}) |",
    ])


def write_results(runs: list[LossRun], summary: LossSummary, out: Path, command: str, suffix: str = "") -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    tag = f"{summary.loss_percent:g}".replace(".", "_") + suffix
    table = out / f"ros_loss_{tag}.md"
    table.write_text(f"# A task across two hosts with {summary.loss_percent:g} % packet loss\n\n"
                     f"Made by `{command}` on {time.strftime('%Y-%m-%d')}.\n\n"
                     f"{summary_table(summary, sum(r.loss_percent == 0.0 for r in runs))}\n\n"
                     f"Failures: {summary.failures}. Verdict: "
                     f"{'meets the bar' if summary.meets_bar() else 'misses the bar'}.\n", encoding="utf-8")
    rows = out / f"ros_loss_{tag}.csv"
    with rows.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["run", "loss_percent", "seconds", "steps", "success", "dropped_packets", "error"])
        for r in runs:
            writer.writerow([r.run, r.loss_percent, f"{r.seconds:.3f}", r.steps, int(r.success), r.dropped_packets,
                             r.error])
    return [table, rows]
