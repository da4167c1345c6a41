"""`conceptagent run | bench | scenes | study | overhead | examples`: tasks on the embedded world and
the benchmarks over them."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conceptagent_ros.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    command_line,
    failure_rates,
    positive_int,
    printable,
    writable_file,
)
from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.terminal import step_lines


def add_parsers(sub: Any) -> None:
    run = sub.add_parser("run", help="run one instruction on the embedded world")
    run.add_argument("instruction", nargs="?", help="what to do, as text (or --audio)")
    run.add_argument("--audio", metavar="FILE.wav",
                     help="the instruction spoken in a WAV file, heard by Whisper base (models fetch --only speech)")
    run.add_argument("--asr-model", default="whisper-base", help="for --audio: a speech model name or folder")
    run.add_argument("--scene", default="studio_kitchen", help="built-in scene name or scene YAML path")
    run.add_argument("--goal", help="PDDL goal formula (default: interpreted from the instruction)")
    run.add_argument("--planner", default="react",
                     help="react (default), base, mcts, llm-planner, tree-planner, grounded-decoding; "
                          "options as NAME:key=value,... (see docs/planners.md)")
    run.add_argument("--llm", default="offline",
                     help="offline | simulated[:RATE|PROFILE] | openai:MODEL | local[:NAME] (a fetched model on CPU) | "
                          "hf:PATH (grounded-decoding)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--max-steps", type=positive_int, default=40)
    run.add_argument("--failure-rate", action="append", metavar="SKILL=P", help="inject physical failures")
    run.add_argument("--trace", help="write a JSONL trace of every step to this file")
    run.add_argument("--perception", choices=("truth", "camera"), default="truth",
                     help="truth: the world says what is in view; camera: synthetic RGB-D frames fused into a 3D "
                          "object map (needs open3d: pip install '.[perception]'). With --body pybullet in a household: "
                          "truth is the body's own view of what its mast camera segments; camera fuses those images "
                          "in the perception pipeline, as the ROS graph's perception and scene graph nodes do")
    run.add_argument("--body", choices=("symbolic", "pybullet"), default="symbolic",
                     help="symbolic (default): skills change the embedded world's symbols; pybullet: a body in "
                          "PyBullet does them, seeing through its own cameras, and the goal is judged on the physics "
                          "(a household scene: conceptagent_mm in the exported world; --scene tabletop: the Panda)")
    run.add_argument("--gui", action="store_true", help="--body pybullet: open PyBullet's window")
    run.add_argument("--sensing", choices=("ideal", "realistic"), default=None,
                     help="--body pybullet in a household: realistic (the default) puts the mast camera's depth through an "
                          "RGB-D noise model and localizes the base from drifting odometry and the lidar; ideal gives "
                          "the body the simulator's noiseless depth and true poses (bodies/sensing.py)")
    run.set_defaults(func=cmd_run)

    bench = sub.add_parser("bench", help="run planners over task suites")
    bench.add_argument("--suite", action="append",
                       help="built-in suite: easy, moderate, hard (repeatable); voxposer; eai-virtualhome "
                            "(Embodied Agent Interface's VirtualHome tasks); grasp (the physical Panda picking "
                            "pybullet_data's objects); place (picking each and putting it into a tray); drawer (opening "
                            "and closing the cabinet's drawers); navigation (--body pybullet: the robot's base driving to every "
                            "object of the exported worlds)")
    bench.add_argument("--tasks", action="append", help="task YAML file (repeatable)")
    bench.add_argument("--planner", action="append", help="planner spec as for run (repeatable)")
    bench.add_argument("--llm", default="offline",
                       help="offline | simulated[:RATE|PROFILE] | openai:MODEL | local[:NAME] | hf:PATH")
    bench.add_argument("--seeds", type=positive_int, default=1)
    bench.add_argument("--max-steps", type=positive_int, default=40)
    bench.add_argument("--failure-rate", action="append", metavar="SKILL=P")
    bench.add_argument("--out", help="directory for results.json, results.md and traces")
    bench.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                       help="with the same --out and configuration, skip the episodes already done (default); "
                            "--no-resume discards them and starts over")
    bench.add_argument("--unseen", action="store_true",
                       help="voxposer suite: draw colours, places and distances beyond the paper's seen lists")
    bench.add_argument("--perception", choices=("truth", "camera"), default="truth",
                       help="camera: the agent sees through synthetic RGB-D frames fused into a 3D object map (with "
                            "--body pybullet in a household: the mast camera's images, as for run)")
    bench.add_argument("--body", choices=("symbolic", "pybullet"), default="symbolic",
                       help="as for run: pybullet has a body in PyBullet do the skills (household suites: "
                            "conceptagent_mm; suite tabletop: the Panda), or the robot's base drive (suite navigation); "
                            "the symbolic run of the same tasks is reported beside it, and with --out a picture per task")
    bench.add_argument("--gui", action="store_true", help="--body pybullet: open PyBullet's window")
    bench.add_argument("--sensing", choices=("ideal", "realistic"), default=None,
                       help="as for run: the household body's senses (realistic, the default, or ideal); for "
                            "the grasp, place and drawer suites the tabletop cameras' depth (ideal, the default, or "
                            "realistic: through the RGB-D noise model)")
    bench.add_argument("--scene", help="navigation suite: one household scene (default: every built-in one)")
    bench.add_argument("--translate", action="store_true",
                       help="goals from the instructions (as `run` without --goal), scored right or wrong against "
                            "each task's goal beside success")
    bench.add_argument("--task", action="append", metavar="ID",
                       help="run only this task of the --suite or --tasks given, or of eai-virtualhome (repeatable)")
    bench.add_argument("--eai-data", metavar="DIR",
                       help="eai-virtualhome: a benchmark folder of the same layout instead of the shipped 171 tasks")
    bench.add_argument("--template", action="append", type=int, metavar="N",
                       help="voxposer suite: only template N (1..13, Table 4's order; repeatable)")
    bench.add_argument("--objects", default="named",
                       help="grasp and place suites: named, random:A-B (random_urdfs ids), shapes:dev or shapes:heldout "
                            "(generated everyday shapes, 10 families), or a comma list (default named)")
    bench.add_argument("--clutter", type=positive_int, default=1,
                       help="grasp suite: objects on the table together, each picked in turn (default 1)")
    bench.set_defaults(func=cmd_bench)

    scenes = sub.add_parser("scenes", help="list scenes, show one scene's objects, or generate houses "
                                           "(scenes generate --seed N --out DIR)")
    scenes.add_argument("name", nargs="?", help="a scene to show, or 'generate'")
    scenes.add_argument("--seed", type=int, action="append", help="generate: the house of this seed (repeatable)")
    scenes.add_argument("--seeds", help="generate: a range of seeds, FIRST-LAST (development 0-99, evaluation 100-199)")
    scenes.add_argument("--out", type=Path, help="generate: the directory to write house_N.yaml and house_N_tasks.yaml to")
    scenes.add_argument("--tasks-per-house", type=positive_int, default=3, help="generate: easy tasks per house (default 3)")
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
    oh.add_argument("--repeats", type=int, default=3,
                    help="runs of the same decisions; each decision's fastest counts (default 3)")
    oh.set_defaults(func=cmd_overhead)

    ex = sub.add_parser("examples", help="record the LLM-Planner example bank from the offline backend's plans")
    ex.add_argument("--suite", action="append", help="suites to record (default: all built-in)")
    ex.add_argument("--out", default="config/examples/plan_bank.yaml")
    ex.set_defaults(func=cmd_examples)



def cmd_run(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode

    def show(report: Any) -> None:
        call = report.record.call
        lines = step_lines(report.step, report.executed, report.record.success, str(call) if call else None,
                           call.skill if call else None, report.record.feedback, report.new_objects)
        print("\n".join(lines), flush=True)

    trace = writable_file(args.trace, "--trace") if args.trace else None
    if (args.instruction is None) == (args.audio is None):
        raise ConceptAgentError("give the instruction as text or as --audio FILE.wav (one of the two)")
    if args.audio is not None:
        from conceptagent_ros.speech.hearing import command_from_wav, scene_vocabulary

        heard = command_from_wav(args.audio, args.asr_model, scene_vocabulary(args.scene))
        print(f"Heard: {printable(heard.text)} (confidence {heard.confidence:.2f}, {heard.seconds:.1f} s)", flush=True)
        args.instruction = heard.text
    spec = EpisodeSpec.of(
        instruction=args.instruction, scene=args.scene, goal=args.goal, planner=args.planner, llm=args.llm,
        seed=args.seed, max_steps=args.max_steps, failure_rates=failure_rates(args.failure_rate), trace=trace,
        perception=args.perception, body=args.body, gui=args.gui, sensing=_sensing(args, [args.scene]),
    )
    print(f"Task: {printable(' '.join(args.instruction.split()))}\nScene: {printable(args.scene)}   "
          f"planner: {printable(args.planner)}   llm: {printable(args.llm)}   seed: {args.seed}", flush=True)
    result = run_episode(spec, on_step=show)
    print(f"Goal: {result.goal}")
    verdict = "SUCCESS: the goal holds" if result.success else f"FAILED: unmet {', '.join(result.unmet) or 'goal'}"
    per_call = f" ({result.llm_seconds / result.llm_calls:.2f} s per call)" if result.llm_calls else ""
    print(f"{verdict} after {result.stats.steps} steps ({result.stats.stop_reason}); "
          f"LLM calls {result.llm_calls}{per_call}, tokens {result.prompt_tokens + result.completion_tokens}, "
          f"wall {result.stats.wall_seconds:.1f} s")
    if args.trace:
        print(f"Trace written to {args.trace}")
    return EXIT_OK if result.success else EXIT_FAILED


def _alone(args: argparse.Namespace, suite: str) -> None:
    """Suites that are worlds of their own are not mixed with others in one bench run."""
    if len(args.suite) > 1 or args.tasks:
        raise ConceptAgentError(f"--suite {suite} runs on its own (it is a different world)")


def _tabletop_sensing(args: argparse.Namespace) -> str:
    """The grasp, place and drawer suites' --sensing: the tabletop's four fixed cameras, whose depth
    goes through the RGB-D noise model with `realistic` (their poses are known: nothing to localize).
    Ideal unless asked, as their published figures were measured so."""
    sensing = args.sensing or "ideal"
    print(f"Sensing: {sensing} (the tabletop's cameras: "
          f"{'depth through the RGB-D noise model' if sensing == 'realistic' else 'depth as rendered'})", flush=True)
    return str(sensing)


def _sensing_flag(sensing: str) -> str:
    return " --sensing realistic" if sensing == "realistic" else ""


def _bench_grasp(args: argparse.Namespace) -> int:
    _alone(args, "grasp")
    from conceptagent_ros.evaluation.grasp_bench import parse_objects, run_grasp_bench, summary, write_results

    objects = parse_objects(args.objects)
    print(f"Grasping {len(objects)} object{'s' if len(objects) != 1 else ''} x {args.seeds} seed"
          f"{'s' if args.seeds != 1 else ''}" + (f", {args.clutter} at a time" if args.clutter > 1 else ", one at a time"),
          flush=True)
    picture = Path(args.out) / "candidates.png" if args.out else None
    if picture is not None and picture.exists():
        picture.unlink()  # this run's
    sensing = _tabletop_sensing(args)
    episodes = run_grasp_bench(objects, args.seeds, args.clutter, stream=sys.stdout, picture=picture, sensing=sensing)
    figures = summary(episodes)
    print(f"success {figures['successes']}/{figures['episodes']} ({figures['success_rate']:.0%}, 95% "
          f"{figures['wilson_95'][0]:.0%}-{figures['wilson_95'][1]:.0%}); planning median "
          f"{figures['planning_ms_median'] or 0:.1f} ms per object; failures {figures['failures_by_code'] or 'none'}")
    if args.out:
        command = (f"conceptagent bench --suite grasp --objects {args.objects} --clutter {args.clutter} "
                   f"--seeds {args.seeds}{_sensing_flag(sensing)}")
        for path in write_results(episodes, Path(args.out), command, args.clutter):
            print(f"wrote {path}")
        if picture is not None and picture.exists():
            print(f"wrote {picture}")
    return EXIT_OK


def _bench_place(args: argparse.Namespace) -> int:
    _alone(args, "place")
    from conceptagent_ros.evaluation.grasp_bench import parse_objects
    from conceptagent_ros.evaluation.place_bench import run_place_bench, write_results

    objects = parse_objects(args.objects)
    print(f"Picking {len(objects)} object{'s' if len(objects) != 1 else ''} x {args.seeds} seed"
          f"{'s' if args.seeds != 1 else ''} and placing each into a tray", flush=True)
    sensing = _tabletop_sensing(args)
    episodes = run_place_bench(objects, args.seeds, sys.stdout, sensing)
    wins = sum(e.success for e in episodes)
    print(f"placed {wins}/{len(episodes)} ({wins / len(episodes):.0%})")
    if args.out:
        command = f"conceptagent bench --suite place --objects {args.objects} --seeds {args.seeds}{_sensing_flag(sensing)}"
        for path in write_results(episodes, Path(args.out), command):
            print(f"wrote {path}")
    return EXIT_OK


def _bench_drawer(args: argparse.Namespace) -> int:
    _alone(args, "drawer")
    from conceptagent_ros.evaluation.drawer_bench import run_drawer_bench, summary_line, write_results

    print(f"Opening and closing each of the cabinet's three drawers, {args.seeds} seed{'s' if args.seeds != 1 else ''}",
          flush=True)
    sensing = _tabletop_sensing(args)
    episodes = run_drawer_bench(args.seeds, sys.stdout, sensing)
    print(summary_line(episodes))
    if args.out:
        command = f"conceptagent bench --suite drawer --seeds {args.seeds}{_sensing_flag(sensing)}"
        for path in write_results(episodes, Path(args.out), command):
            print(f"wrote {path}")
    return EXIT_OK


def _bench_navigation(args: argparse.Namespace) -> int:
    _alone(args, "navigation")
    if args.body != "pybullet":
        raise ConceptAgentError("--suite navigation drives the robot's base in PyBullet: add --body pybullet")
    from conceptagent_ros.evaluation.navigation_bench import (
        run_navigation_scene,
        run_perceived_navigation_scene,
        summary,
        write_results,
    )
    from conceptagent_ros.scene.loader import list_scenes

    scenes = [args.scene] if args.scene else list_scenes("household")
    perceived = _sensing(args, scenes) == "realistic"
    print(f"Driving to every object of {', '.join(scenes)} in the exported world{'s' if len(scenes) > 1 else ''}"
          + (", as the robot perceives it" if perceived else ", its true box"), flush=True)
    if perceived:
        episodes = [e for name in scenes for e in run_perceived_navigation_scene(name, sys.stdout)]
    else:
        episodes = [e for name in scenes for e in run_navigation_scene(name, sys.stdout)]
    s = summary(episodes)
    low, high = s["wilson_95"]
    ratio = s["path_over_straight_line_median"] or 0.0
    print(f"reached {s['reached']}/{s['drives']} ({s['success_rate']:.0%}, 95% {low:.0%}-{high:.0%}), "
          f"{s['reached_within_arms_reach']} with the object within the arm's reach; path over straight line "
          f"{ratio:.2f} at the median; failures {s['failures_by_code'] or 'none'}"
          + (f"; {s['not_seen']} things never seen" if s["not_seen"] else ""))
    if args.out:
        command = "conceptagent bench --suite navigation --body pybullet" + (f" --scene {args.scene}" if args.scene else "") \
            + f" --sensing {'realistic' if perceived else 'ideal'}"  # named: realistic is the default
        for path in write_results(episodes, Path(args.out), command, perceived=perceived):
            print(f"wrote {path}")
    return EXIT_OK


def _sensing(args: argparse.Namespace, scenes: Sequence[str]) -> str:
    """--sensing, which only a body in PyBullet has: as given, else the body's own for the scenes'
    setting (bodies/sensing.body_sensing)."""
    from conceptagent_ros.bodies.sensing import body_sensing
    from conceptagent_ros.scene.loader import load_scene

    if args.body != "pybullet":
        if args.sensing is not None:
            raise ConceptAgentError("--sensing is a physical body's: give --body pybullet too")
        return "ideal"  # the symbolic world has no sensors: nothing to load the scenes for
    settings = {load_scene(name).setting for name in scenes}
    if len(settings) > 1:
        raise ConceptAgentError(f"--body pybullet senses differently in {' and '.join(sorted(settings))} scenes: "
                                "bench them apart")
    try:
        return body_sensing(args.body, settings.pop() if settings else "household", args.sensing)
    except ValueError as e:
        raise ConceptAgentError(str(e)) from None


def cmd_bench(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from conceptagent_ros.evaluation.bench import BenchConfig, markdown_table, run_bench, summarize, write_results
    from conceptagent_ros.evaluation.body_report import body_markdown
    from conceptagent_ros.evaluation.journal import EpisodeJournal
    from conceptagent_ros.evaluation.tasks import load_suite, load_tasks, only_tasks
    from conceptagent_ros.planning.planners import PlannerSpec

    if args.suite and "voxposer" in args.suite:
        _alone(args, "voxposer")
        from conceptagent_ros.evaluation.voxposer_bench import bench_voxposer
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
    if args.task and args.suite and set(args.suite) & {"voxposer", "grasp", "place", "drawer", "navigation"}:
        raise ConceptAgentError("--task picks tasks of a task suite, a task file or eai-virtualhome; the "
                                f"{', '.join(args.suite)} suite has objects or drives, not tasks")
    if args.suite and "grasp" in args.suite:
        return _bench_grasp(args)
    if args.suite and "place" in args.suite:
        return _bench_place(args)
    if args.suite and "drawer" in args.suite:
        return _bench_drawer(args)
    if args.suite and "navigation" in args.suite:
        return _bench_navigation(args)
    tasks = [t for name in args.suite or [] for t in load_suite(name)]
    tasks += [t for path in args.tasks or [] for t in load_tasks(path)]
    tasks = only_tasks(tasks, args.task, ", ".join([*(args.suite or []), *(args.tasks or [])]))
    if not tasks:
        raise ConceptAgentError("bench needs --suite NAME or --tasks FILE.yaml")
    planners = [str(PlannerSpec.parse(p)) for p in (args.planner or ["react"])]  # bad specs fail before any run
    if args.seeds < 1:
        raise ConceptAgentError("--seeds must be at least 1")
    out = Path(args.out) if args.out else None
    config = BenchConfig(planners=planners, llm=args.llm, seeds=args.seeds, max_steps=args.max_steps,
                         failure_rates=failure_rates(args.failure_rate), out=out, translate=args.translate,
                         perception=args.perception, body=args.body, gui=args.gui,
                         sensing=_sensing(args, sorted({t.scene for t in tasks})))
    journal = EpisodeJournal(out, config.fingerprint(tasks), resume=args.resume) if out is not None else None
    if journal is not None and journal.done:
        print(f"Resuming: {len(journal.done)} episodes already in {journal.path}", file=sys.stderr)
    rows = run_bench(tasks, config, journal=journal)
    summary = summarize(rows)
    print(markdown_table(summary))
    appendix = ""
    if args.body == "pybullet":  # the same tasks in the symbolic world, beside the body's run
        print("The same tasks in the symbolic world, for comparison:", file=sys.stderr)
        symbolic = run_bench(tasks, replace(config, body="symbolic", gui=False, out=None, sensing="ideal"), journal=journal,
                             extra={"section": "symbolic"})
        appendix = body_markdown(rows, symbolic, out)
        print(appendix)
    if out is not None:
        write_results(out, rows, summary, command_line(), appendix)
        print(f"Results written to {out / 'results.json'} and {out / 'results.md'}")
    return EXIT_OK


def _bench_eai(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.eai_virtualhome.bench import EAIBenchConfig, report, run_eai_bench, write_eai_results

    if len(args.suite) > 1 or args.tasks:
        raise ConceptAgentError("--suite eai-virtualhome runs on its own (its tasks are worlds of their own)")
    out = Path(args.out) if args.out else None
    # Without --planner: the benchmark's react loop (agents.py), which also serves a chat model; with it,
    # each planner through the household agent loop over the adapted worlds (adapter.py).
    config = EAIBenchConfig(llm=args.llm, seeds=args.seeds, max_steps=args.max_steps, task_ids=args.task,
                            data=args.eai_data, out=out, planners=list(args.planner or []))
    rows = run_eai_bench(config)
    command = command_line()
    print(report(rows, command))
    if out is not None:
        write_eai_results(out, rows, command)
        print(f"Report written to {out / 'README.md'}; episodes in {out / 'episodes.csv'} and {out / 'results.json'}")
    return EXIT_OK


def _seeds(args: argparse.Namespace) -> list[int]:
    from conceptagent_ros.errors import SceneError

    seeds = list(args.seed or [])
    if args.seeds:
        first, _, last = args.seeds.partition("-")
        if not (first.isdigit() and last.isdigit() and int(first) <= int(last)):
            raise SceneError(f"--seeds is FIRST-LAST with FIRST <= LAST, e.g. 100-199 (got {args.seeds!r})")
        seeds += range(int(first), int(last) + 1)
    if not seeds or any(s < 0 for s in seeds):
        raise SceneError("scenes generate needs --seed N (N >= 0) or --seeds FIRST-LAST")
    return sorted(set(seeds))


def cmd_scenes_generate(args: argparse.Namespace) -> int:
    """Houses from seeds, each written as a scene file and a task file; with more than one seed, also
    DIR/tasks.yaml, every house's tasks in one file for `conceptagent bench --tasks`."""
    import yaml

    from conceptagent_ros.errors import SceneError
    from conceptagent_ros.world.generation import generate_house, write_house

    if args.out is None:
        raise SceneError("scenes generate needs --out DIR")
    seeds = _seeds(args)
    every: list[dict[str, Any]] = []
    for seed in seeds:
        house = generate_house(seed, tasks_per_house=args.tasks_per_house)
        try:
            scene_path, tasks_path = write_house(house, args.out)
        except OSError as e:
            raise SceneError(f"cannot write to {args.out}: {e.strerror or e}") from None
        rooms = ", ".join(r["category"].replace("_", " ") for r in house.scene["rooms"])
        print(f"{house.name}: {len(house.scene['rooms'])} rooms ({rooms}), {len(house.scene['objects'])} objects, "
              f"{len(house.tasks)} easy tasks -> {scene_path}, {tasks_path.name}")
        every += house.tasks
    if len(seeds) > 1:
        combined = args.out / "tasks.yaml"
        name = f"generated_{seeds[0]}_{seeds[-1]}"
        combined.write_text(f"# Every task of the houses of seeds {seeds[0]}-{seeds[-1]} (conceptagent scenes generate)\n"
                            + yaml.safe_dump({"name": name, "tasks": every}, sort_keys=False, width=120),
                            encoding="utf-8")
        print(f"{len(every)} tasks in {combined}")
    return EXIT_OK


def cmd_scenes(args: argparse.Namespace) -> int:
    from conceptagent_ros.scene.loader import list_scenes, load_scene

    if args.name == "generate":
        return cmd_scenes_generate(args)

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


def cmd_study(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.study import run_study

    command = command_line()
    report = run_study(Path(args.file), Path(args.out), command, sections_only=args.section or (), resume=args.resume)
    print(f"Report written to {report}")
    return EXIT_OK


def cmd_overhead(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.planning_overhead import MAX_MS_PER_DECISION, measure

    worst, slowest = 0.0, 0.0
    for planner in args.planner or ["mcts:expansions=20", "react"]:
        result = measure(planner, args.objects, args.decisions, args.llm_seconds, repeats=args.repeats)
        print(result.line())
        worst = max(worst, result.ratio)
        slowest = max(slowest, result.overhead_ms_per_decision)
    print(f"largest overhead / LLM time: {worst:.2%} (target: below 10%)")
    print(f"largest overhead per decision: {slowest:.1f} ms (target: at most {MAX_MS_PER_DECISION:g} ms)")
    return EXIT_OK if worst < 0.10 and slowest <= MAX_MS_PER_DECISION else EXIT_FAILED


def cmd_examples(args: argparse.Namespace) -> int:
    from conceptagent_ros.evaluation.example_bank import record_plans, write_bank
    from conceptagent_ros.evaluation.tasks import load_suite

    tasks = [t for name in args.suite or ["easy", "moderate", "hard"] for t in load_suite(name)]
    examples = record_plans(tasks)
    write_bank(examples, Path(args.out))
    print(f"{len(examples)} examples written to {args.out}")
    return EXIT_OK
