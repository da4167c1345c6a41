"""The simulated model's episode-dependent errors and the world's irreversible outcomes: each
occurs, persists and ends as specified (seeded runs on the embedded world; the judge is the step
records and the world's ground truth, not the model's own bookkeeping)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode
from conceptagent_ros.llm.spec import load_profiles, parse_llm_spec, simulated_profile
from conceptagent_ros.scene.loader import load_scene
from conceptagent_ros.sim.world import World, WorldRealism
from conceptagent_ros.skills.contract import SkillCall

APPLE = "put the apple in the fridge"


def records(planner: str, llm: str, seed: int = 0, **kw):
    steps: list = []
    result = run_episode(EpisodeSpec.of(APPLE, planner=planner, llm=llm, seed=seed, task_id="t", **kw),
                         on_step=lambda s: steps.append(s.record))
    return result, steps


@pytest.fixture
def config_with_profile(tmp_path, monkeypatch):
    """The shipped config plus a profile of the test's own (CONCEPTAGENT_CONFIG)."""
    from conceptagent_ros.paths import config_dir

    root = tmp_path / "config"
    shutil.copytree(config_dir(), root)

    def add(name: str, errors: dict, world: dict) -> str:
        path = root / "llm_profiles.yaml"
        data = yaml.safe_load(path.read_text())
        data["profiles"][name] = {"errors": errors, "world": world}
        path.write_text(yaml.safe_dump(data))
        return f"simulated:{name}"
    monkeypatch.setenv("CONCEPTAGENT_CONFIG", str(root))
    config_dir.cache_clear()
    yield add
    config_dir.cache_clear()  # before monkeypatch restores the variable: the next call reads it afresh


def test_shipped_profiles_load_and_bad_ones_are_refused(tmp_path):
    realistic = simulated_profile("realistic")
    assert realistic.errors.misconception > 0 and not WorldRealism.from_settings(realistic.world_settings).explain_failures
    assert simulated_profile("0.3").errors.infeasible == pytest.approx(0.1)
    assert WorldRealism.from_settings(simulated_profile("0.3").world_settings) == WorldRealism()
    with pytest.raises(ConceptAgentError, match="unknown simulated profile 'sloppy'.*realistic"):
        parse_llm_spec("simulated:sloppy")
    bad = tmp_path / "p.yaml"
    bad.write_text("profiles:\n  x:\n    errors: {halucination: 0.1}\n")
    with pytest.raises(ConceptAgentError, match="unknown field.*halucination"):
        load_profiles(bad)
    bad.write_text("profiles:\n  x:\n    errors: {loop: 3}\n")
    with pytest.raises(ConceptAgentError, match="loop=3"):
        load_profiles(bad)


def test_a_container_believed_open_is_skipped_until_feedback_names_it_then_opened():
    result, steps = records("react", "simulated:misconception=1")
    calls = [r.call for r in steps]
    contradiction = next(i for i, r in enumerate(steps)
                         if r.failure == "blocked" and "fridge_1" in r.feedback and "open" in r.feedback)
    assert SkillCall("open", ("fridge_1",)) not in calls[:contradiction]  # persists: never opened before
    assert calls[contradiction] == SkillCall("place", ("apple_1", "fridge_1"))  # acted on the wrong belief
    assert SkillCall("open", ("fridge_1",)) in calls[contradiction + 1:]  # ends with the named cause
    assert result.success


def test_without_the_cause_the_failed_place_is_repeated_and_the_task_lost(config_with_profile):
    unexplained = config_with_profile("blind", {"misconception": 1, "repeat_unexplained": 1},
                                      {"explain_failures": False})
    result, steps = records("base", unexplained)
    places = [r for r in steps if r.call == SkillCall("place", ("apple_1", "fridge_1"))]
    assert len(places) >= 4 and all(r.failure in ("unexplained", "repeated") for r in places)
    assert not result.success
    explained = config_with_profile("told", {"misconception": 1, "repeat_unexplained": 1},
                                    {"explain_failures": True})
    result, steps = records("base", explained)
    assert result.success  # the world's reason names the closed fridge: the belief ends


def test_repetition_depends_on_whether_the_cause_was_fed_back():
    _, steps = records("react", "simulated:infeasible=0.5,repeat_explained=1", seed=3)
    first = next(i for i, r in enumerate(steps) if r.failure == "blocked")
    assert all(r.call == steps[first].call for r in steps[first:])  # tried again and again
    _, steps = records("react", "simulated:infeasible=0.5,repeat_explained=0", seed=3)
    blocked = [i for i, r in enumerate(steps[:-1]) if r.failure == "blocked"]
    assert blocked and not all(steps[i + 1].call == steps[i].call for i in blocked)


def test_premature_done_is_refused_and_the_episode_goes_on():
    _, steps = records("react", "simulated:premature_done=1")
    assert [r.failure for r in steps[:3]] == ["premature_done"] * 3
    result, steps = records("react", "simulated:premature_done=0.3", seed=1)
    assert any(r.failure == "premature_done" for r in steps) and result.success


def test_a_loop_alternates_between_the_last_two_actions():
    _, steps = records("react", "simulated:loop=1")
    calls = [r.call for r in steps]
    a, b = calls[0], calls[1]  # both executed: a loop starts at the third decision
    assert steps[0].executed and steps[1].executed and a != b
    assert calls[2:4] == [a, b]  # back to the one before last, then the last
    _, steps = records("react", "simulated:loop=0.2", seed=2)
    calls = [r.call for r in steps]
    assert any(calls[i] == calls[i - 2] != calls[i - 1] for i in range(2, len(calls)))  # occurs
    assert steps[-1].call == SkillCall("done") and steps[-1].success  # and ends


def test_a_careless_place_can_lose_the_object_for_good():
    world = World(load_scene("studio_kitchen"), seed=0, realism=WorldRealism(explain_failures=False, drop_on_failure=1.0))
    for call in (SkillCall("navigate_to", ("apple_1",)), SkillCall("pick", ("apple_1",)),
                 SkillCall("navigate_to", ("fridge_1",))):
        assert world.execute(call).success
    dropped = world.execute(SkillCall("place", ("apple_1", "fridge_1")))  # the fridge is closed
    assert not dropped.success and dropped.failure == "irreversible" and world.robot.holding is None
    assert "apple_1" not in {o.id for o in world.observe().objects}
    world.execute(SkillCall("open", ("fridge_1",)))
    again = world.execute(SkillCall("pick", ("apple_1",)))
    assert not again.success and "out of reach" in again.message
    blind = World(load_scene("studio_kitchen"), seed=0, realism=WorldRealism(explain_failures=False))
    outcome = blind.execute(SkillCall("open", ("fridge_1",)))  # not near it
    assert outcome.failure == "unexplained" and "near" not in outcome.message


def test_profiles_file_documents_every_field_it_sets():
    text = (Path(__file__).resolve().parents[1] / "config" / "llm_profiles.yaml").read_text()
    for name, profile in load_profiles().items():
        assert f"  {name}:" in text and profile.name == name


def test_a_study_report_names_the_profiles_it_used_and_only_those():
    from conceptagent_ros.evaluation.study import profiles_used

    lines = profiles_used(["simulated:realistic", "simulated:0.2", "simulated:hallucination=0.1", "offline"])
    assert len(lines) == 1 and lines[0].startswith("Profile `simulated:realistic`") and "misconception=0.7" in lines[0]
