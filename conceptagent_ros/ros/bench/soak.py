"""A long run through the graph: `conceptagent ros soak --tasks 200 [--perception camera|truth] [--out DIR]`, writing
ros_soak_<perception>.md and .csv.

The suite's tasks, cycled until there are N, go back to back through one graph (robot stand-in,
planner, and with the camera the perception and scene graph nodes), reset between tasks, as
`ros suite` runs them. After every task it samples what a leak would grow: the graph process's
resident memory, its OS threads (each DDS participant and executor brings its own), its Python
threads, and the nodes the DDS graph shows on the domain (a participant left behind stays listed).

Verdict: every task ended (success or a clear failure, none hung past its timeout); memory at the
end at most +10 % over memory after the warm-up tasks (the first 20, or a tenth of a short run);
threads and graph nodes no more at the end than the most seen in the first half (executors' thread
pools fill on demand, so a count can rise once; a leak keeps rising).

The nodes share one process here (as a composable container runs them), so the memory figure is
the planner's, the perception node's and the stand-in's together: flat together, flat each.
"""
from __future__ import annotations

import csv
import itertools
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.tasks import Task
from conceptagent_ros.ros.bench.graph_suite import GraphEpisode, GraphSuiteConfig, run_graph_suite
from conceptagent_ros.ros.client_node import ClientNode
from conceptagent_ros.ros.spin import init_context

MEMORY_GROWTH_BAR = 0.10
WARM_UP_TASKS = 20


@dataclass(frozen=True)
class SoakSample:
    task: int
    task_id: str
    ended: bool  # answered within the task timeout (success or a clear failure)
    success: bool
    seconds: float
    rss_mb: float
    os_threads: int
    python_threads: int
    graph_nodes: int


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def cycled(tasks: Sequence[Task], count: int) -> list[Task]:
    """`count` tasks, the suite's in order and again; ids made unique by their round."""
    if not tasks:
        raise ConceptAgentError("no tasks to soak with")
    return [replace(task, id=f"{task.id}#{i // len(tasks) + 1}")
            for i, task in enumerate(itertools.islice(itertools.cycle(tasks), count))]


@dataclass(frozen=True)
class SoakSummary:
    tasks: int
    ended: int
    succeeded: int
    warm_up: int
    rss_after_warm_up: float
    rss_end: float
    os_threads_after_warm_up: int
    os_threads_first_half: int  # the most seen up to the middle of the run: executor pools fill on demand
    os_threads_end: int
    graph_nodes_after_warm_up: int
    graph_nodes_first_half: int
    graph_nodes_end: int
    median_seconds: float

    @property
    def memory_growth(self) -> float:
        return self.rss_end / self.rss_after_warm_up - 1.0

    def verdicts(self) -> dict[str, bool]:
        return {"every task ended": self.ended == self.tasks,
                f"memory within +{MEMORY_GROWTH_BAR:.0%} after the warm-up": self.memory_growth <= MEMORY_GROWTH_BAR,
                "no thread leaked (none more at the end than in the first half)":
                    self.os_threads_end <= self.os_threads_first_half,
                "no DDS participant or node leaked (none more at the end than in the first half)":
                    self.graph_nodes_end <= self.graph_nodes_first_half}

    def passed(self) -> bool:
        return all(self.verdicts().values())


def summarize(samples: Sequence[SoakSample]) -> SoakSummary:
    if not samples:
        raise ConceptAgentError("no task ran")
    warm_up = min(WARM_UP_TASKS, max(1, len(samples) // 10))
    base, last = samples[warm_up - 1], samples[-1]
    first_half = samples[:max(1, len(samples) // 2)]
    seconds = sorted(s.seconds for s in samples)
    return SoakSummary(len(samples), sum(s.ended for s in samples), sum(s.success for s in samples), warm_up,
                       base.rss_mb, last.rss_mb, base.os_threads, max(s.os_threads for s in first_half),
                       last.os_threads, base.graph_nodes, max(s.graph_nodes for s in first_half), last.graph_nodes,
                       seconds[len(seconds) // 2])


def run_soak(tasks: Sequence[Task], count: int, config: GraphSuiteConfig, progress_every: int = 10) -> list[SoakSample]:
    from conceptagent_ros.ros.domains import reserved_domain

    soak_tasks = cycled(tasks, count)
    samples: list[SoakSample] = []
    with reserved_domain() as domain:
        # an observer of the domain with a participant of its own: what any `ros2 node list` would see
        observer = ClientNode("soak_observer", "soak", context=init_context(domain))
        started = time.perf_counter()
        lock = threading.Lock()

        def sample(episode: GraphEpisode) -> None:
            with lock:
                index = len(samples) + 1
                ended = not episode.error.startswith("the task did not end")
                samples.append(SoakSample(index, episode.task_id, ended, episode.success, episode.seconds, _rss_mb(),
                                          _os_threads(), threading.active_count(),
                                          len(observer.node.get_node_names_and_namespaces())))
                if index % progress_every == 0 or index == count:
                    s = samples[-1]
                    rate = index / (time.perf_counter() - started)
                    print(f"[{index:>4}/{count}] {sum(x.success for x in samples)} succeeded, "
                          f"{sum(not x.ended for x in samples)} did not end; RSS {s.rss_mb:.0f} MB, "
                          f"{s.os_threads} OS threads, {s.graph_nodes} graph nodes; "
                          f"eta {(count - index) / rate:.0f} s", flush=True)

        try:
            with open(os.devnull, "w", encoding="utf-8") as quiet:  # the progress lines are sample()'s
                run_graph_suite(soak_tasks, config, stream=quiet, on_episode=sample, domain_id=domain)
        finally:
            observer.close()
    return samples


def summary_markdown(summary: SoakSummary, config: GraphSuiteConfig, command: str) -> str:
    rows = [f"| tasks | {summary.tasks} |", f"| ended (success or a clear failure) | {summary.ended} |",
            f"| succeeded (judged on the stand-in's world) | {summary.succeeded} |",
            f"| median seconds per task | {summary.median_seconds:.2f} |",
            f"| resident memory after task {summary.warm_up} / at the end | {summary.rss_after_warm_up:.0f} MB / "
            f"{summary.rss_end:.0f} MB (**{summary.memory_growth:+.1%}**) |",
            f"| OS threads after task {summary.warm_up} / most in the first half / at the end | "
            f"{summary.os_threads_after_warm_up} / {summary.os_threads_first_half} / {summary.os_threads_end} |",
            f"| nodes in the DDS graph after task {summary.warm_up} / most in the first half / at the end | "
            f"{summary.graph_nodes_after_warm_up} / {summary.graph_nodes_first_half} / {summary.graph_nodes_end} |"]
    verdicts = [f"- {'yes' if ok else '**no**'}: {what}" for what, ok in summary.verdicts().items()]
    return "\n".join([f"# Soak: {summary.tasks} tasks back to back through the ROS graph", "",
                      f"Made by `{command}` on {time.strftime('%Y-%m-%d')}: planner `{config.planner}` with "
                      f"`{config.llm}`, perception `{config.perception}`, the stand-in reset between tasks.", "",
                      "| figure | value |", "|---|---|", *rows, "", *verdicts, ""])


def write_results(samples: Sequence[SoakSample], summary: SoakSummary, config: GraphSuiteConfig, out: Path,
                  command: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    table, rows = out / f"ros_soak_{config.perception}.md", out / f"ros_soak_{config.perception}.csv"
    table.write_text(summary_markdown(summary, config, command), encoding="utf-8")
    with rows.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(samples[0])))
        writer.writeheader()
        writer.writerows(asdict(s) for s in samples)
    return [table, rows]
