"""One VoxPoser run on the PyBullet tabletop: what `conceptagent voxposer` calls, and what the
per-template bench (evaluation/voxposer_bench.py) runs for each episode."""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.llm.spec import parse_llm_spec
from conceptagent_ros.voxposer.api import WORKER_RUNNER
from conceptagent_ros.voxposer.executor import RunReport, VoxPoser, VoxPoserOptions
from conceptagent_ros.voxposer.lmps import ChatWriter, OfflineWriter, ProgramBook, ProgramCache, ProgramWriter, load_lmp_settings
from conceptagent_ros.voxposer.planners import PLANNERS
from conceptagent_ros.voxposer.sandbox import Sandbox
from conceptagent_ros.voxposer.tabletop import Tabletop, TabletopScene
from conceptagent_ros.voxposer.task_templates import TEMPLATES, make_task


def make_writer(llm: str) -> ProgramWriter:
    spec = parse_llm_spec(llm)
    if spec.kind == "offline":
        return OfflineWriter()
    if spec.chat:
        from conceptagent_ros.llm.chat_factory import open_chat_model
        return ChatWriter(open_chat_model(spec), load_lmp_settings(spec.model))
    raise ConceptAgentError(f"--llm {llm}: VoxPoser takes offline, openai:MODEL or local[:NAME]")


def program_cache() -> ProgramCache:
    root = os.environ.get("CONCEPTAGENT_VOXPOSER_CACHE") or str(Path.home() / ".cache" / "conceptagent" / "voxposer")
    return ProgramCache(Path(root)) if root != "off" else ProgramCache(None)


@dataclass
class Episode:
    report: RunReport
    judged: bool
    verdict: str


def run_on_tabletop(instruction: str, scene: TabletopScene, writer: ProgramWriter, planner: str = "fast",
                    gui: bool = False, progress: Callable[[str], None] | None = None,
                    judge: Callable[[Tabletop], tuple[bool, str]] | None = None, sandbox: Sandbox | None = None,
                    pictures: Path | None = None) -> Episode:
    own_sandbox = sandbox is None
    box = sandbox or Sandbox(WORKER_RUNNER)
    try:
        with Tabletop(scene, gui=gui) as env:
            book = ProgramBook(writer, program_cache())
            agent = VoxPoser(env, book, box, PLANNERS[planner](), VoxPoserOptions(), on_progress=progress)
            report = agent.run(instruction)
            judged, verdict = judge(env) if judge else (report.success, report.message)
            if pictures is not None:
                from conceptagent_ros.voxposer.pictures import save_pictures
                save_pictures(report, env, pictures)
            return Episode(report, judged, verdict)
    finally:
        if own_sandbox:
            box.close()


Judge = Callable[[Tabletop], tuple[bool, str]]


def scene_for(instruction: str, template: int | None, seed: int) -> tuple[TabletopScene, Judge | None]:
    """A tabletop for a free instruction: the blocks and lines it names, placed by `seed`; with
    --template, that template's scene (and its success check when the instruction is the template's)."""
    import re

    import numpy as np

    from conceptagent_ros.voxposer.tabletop import COLOURS, BlockSpec, LineSpec
    if template is not None:
        if not 1 <= template <= len(TEMPLATES):
            raise ConceptAgentError(f"--template must be 1..{len(TEMPLATES)}")
        try:
            # the seen draw for this seed, or the unseen one, whichever wrote this instruction (so
            # that its judge applies); another instruction gets the seen scene and no judge
            tasks = [make_task(template - 1, seed, seen=seen) for seen in (True, False)]
        except NotImplementedError as exc:
            raise ConceptAgentError(str(exc)) from None
        for task in tasks:
            if task.instruction == " ".join(instruction.split()):
                return task.scene, task.judge
        return tasks[0].scene, None
    text = instruction.lower()
    rng = np.random.default_rng(seed)
    blocks, lines = [], []
    named = re.findall(r"\b([a-z]+) (block|line)\b", text)
    for colour, kind in named:
        if colour not in COLOURS:
            raise ConceptAgentError(f"no {colour} {kind} on this tabletop; colours: {', '.join(COLOURS)}")
    colours = [c for c, k in named if k == "block"]
    extra = [c for c in COLOURS if c not in colours][:2]
    for n, colour in enumerate(dict.fromkeys(colours + extra)):
        xy = (0.38 + 0.12 * (n % 3) + rng.uniform(-0.02, 0.02), -0.15 + 0.15 * (n // 3) + rng.uniform(-0.05, 0.05))
        blocks.append(BlockSpec(f"{colour} block", colour, (float(xy[0]), float(xy[1]))))
    for colour in dict.fromkeys(c for c, k in named if k == "line"):
        y = float(rng.uniform(-0.25, 0.25))
        lines.append(LineSpec(f"{colour} line", colour, (0.3, y), (0.7, y)))
    return TabletopScene(tuple(blocks), tuple(lines)), None
