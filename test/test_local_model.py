"""A real language model on CPU: the smallest fetched GGUF model (`make test` fetches it), served by
llama.cpp's OpenAI-compatible server on 127.0.0.1, started, health-checked and stopped by the project.

These tests assert what holds for any model the schema constrains, not what a 0.5B model happens to
choose: every reply is usable, every proposed call is a well-formed call over known objects, the
backends and planners run on it, and the server comes and goes with its user."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conceptagent_ros.evaluation.episode import EpisodeSpec, run_episode
from conceptagent_ros.llm import local_server
from conceptagent_ros.models.store import is_fetched, lookup
from conceptagent_ros.skills.contract import load_skill_library

pytestmark = pytest.mark.slow
MODEL = os.environ.get("CONCEPTAGENT_TEST_MODEL", "qwen2.5-coder-0.5b-instruct")
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module", autouse=True)
def _real_model():
    problem = ("llama-cpp-python is not installed (make local-llm)" if not local_server.runtime_available() else
               f"{MODEL} is not fetched (conceptagent models fetch --model {MODEL})" if not is_fetched(lookup(MODEL))
               else "")
    if problem:
        if os.environ.get("CONCEPTAGENT_REQUIRE_LOCAL_LLM"):
            pytest.fail(problem)
        pytest.skip(problem)
    yield
    local_server.stop_all()


def _episode(llm: str, planner: str = "react", steps: int = 4, trace: Path | None = None):
    return run_episode(EpisodeSpec.of(instruction="put the apple on the dining table", scene="studio_kitchen",
                                      goal="(in apple_1 dining_table_1)", planner=planner, llm=llm, seed=0,
                                      max_steps=steps, trace=trace))


def _well_formed(trace: Path) -> list[str]:
    skills = load_skill_library()
    calls = []
    for line in trace.read_text().splitlines():
        record = json.loads(line)
        assert record["reply_error"] is None, record["raw_reply"]
        action = record["action"]
        name, _, args = action.partition("(")
        spec = skills.get(name)
        assert spec is not None and len([a for a in args.rstrip(")").split(",") if a.strip()]) == spec.arity, action
        calls.append(action)
    return calls


def test_react_on_the_local_model_gets_only_usable_replies(tmp_path):
    trace = tmp_path / "trace.jsonl"
    result = _episode(f"local:{MODEL}", trace=trace)
    assert result.llm_calls >= 1 and result.prompt_tokens > 500  # real prompts, counted by the server
    assert result.stats.malformed_replies == 0 and result.stats.invalid_proposals == 0
    assert len(_well_formed(trace)) == result.stats.steps
    assert result.llm_seconds > 0


def test_the_openai_backend_against_a_real_llama_cpp_server_on_localhost(tmp_path, monkeypatch):
    """`--llm openai:MODEL` pointed at llama.cpp: OpenAI's json_schema spelling is refused by
    llama-cpp-python's server, the backend switches to the spelling it knows, and the schema holds."""
    server = local_server.LocalLlamaServer(MODEL, log_dir=tmp_path).start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        trace = tmp_path / "trace.jsonl"
        result = _episode(f"openai:{server.model}", steps=3, trace=trace)
        assert result.llm_calls >= 1 and result.stats.malformed_replies == 0
        assert _well_formed(trace)
    finally:
        server.stop()
    assert not server.running


def test_grounded_decoding_reads_the_local_model_token_probabilities():
    from conceptagent_ros.llm.chat_factory import open_chat_model
    from conceptagent_ros.llm.spec import parse_llm_spec
    from conceptagent_ros.planning.planners.grounded_decoding.language_models import CompletionsLogprobLM
    from conceptagent_ros.planning.proposal import TokenUsage

    chat = open_chat_model(parse_llm_spec(f"local:{MODEL}"))
    usage = TokenUsage()
    top = CompletionsLogprobLM(chat.model, usage, chat.client).next_tokens("Robot plan: navigate_to(", "", 5)
    assert len(top) == 5 and all(lp <= 0.0 for _, lp in top)
    assert [lp for _, lp in top] == sorted((lp for _, lp in top), reverse=True)
    assert usage.calls == 1 and usage.prompt_tokens > 0
    result = _episode(f"local:{MODEL}", planner="grounded-decoding", steps=2)
    assert result.llm_calls > 2  # one request per decoded token
    assert result.stats.malformed_replies == 0


def test_a_crashed_server_is_started_again_for_the_next_call():
    server = local_server.shared_server(MODEL)
    first = server.process
    assert first is not None
    first.kill()
    first.wait(timeout=10)
    again = local_server.shared_server(MODEL)
    assert again.running and again.process is not first


def test_run_with_local_prints_seconds_per_call_and_leaves_no_server_behind(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "run", "put the apple on the dining table",
                           "--llm", f"local:{MODEL}", "--max-steps", "2"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert "s per call" in done.stdout, done.stdout + done.stderr
    assert "[local llm] ready in" in done.stderr
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", f"llama_server_process --model .*{lookup(MODEL).file}"],
                          capture_output=True, text=True)
    mine = [p for p in left.stdout.split() if p and int(p) not in _servers_of_this_process()]
    assert not mine, f"llama.cpp servers left running: {mine}"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has exited; its reaper may not have come yet


def test_a_server_whose_parent_is_killed_ends_itself():
    """SIGKILL skips atexit: the server process notices it is orphaned and exits."""
    code = (f"from conceptagent_ros.llm import local_server as l; s = l.shared_server({MODEL!r}); "
            "print(s.process.pid, flush=True); import time; time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())  # type: ignore[union-attr]
        assert _alive(pid)
    finally:
        parent.kill()
        parent.wait(timeout=10)
    deadline = time.monotonic() + 20
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pid), "the llama.cpp server outlived the process that started it"


def _servers_of_this_process() -> set[int]:
    return {s.process.pid for s in local_server._SERVERS.values() if s.process is not None}


def test_a_model_that_is_not_fetched_is_a_one_line_error_naming_the_command(tmp_path):
    env = {**os.environ, "CONCEPTAGENT_MODELS": str(tmp_path / "empty")}
    done = subprocess.run([sys.executable, "-m", "conceptagent_ros.cli", "run", "put the apple in the fridge",
                           "--llm", "local:1.5b"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "conceptagent models fetch --model qwen2.5-coder-1.5b-instruct" in done.stderr
    assert "Traceback" not in done.stderr



def test_the_server_command_is_read_by_llama_cpp_s_own_argument_parser():
    cli = pytest.importorskip("llama_cpp.server.cli")
    from llama_cpp.server.settings import ModelSettings, Settings

    settings = local_server.ServerSettings(threads=2)
    command = local_server.LocalLlamaServer("qwen2.5-coder-1.5b-instruct", settings).command(Path("/m/model.gguf"))
    parser = argparse.ArgumentParser()
    cli.add_args_from_model(parser, Settings)
    model = cli.parse_model_from_args(ModelSettings, parser.parse_args(command[command.index("--model"):]))
    assert (model.model, model.n_threads, model.n_threads_batch, model.n_ctx) == ("/m/model.gguf", 2, 2, 4096)
    # no RAM prompt cache unless asked for (CONCEPTAGENT_LOCAL_CACHE_MB): its saved states carry
    # every token's logits (docs/language-models.md)
    assert model.cache is False
    cached = local_server.LocalLlamaServer("qwen2.5-coder-1.5b-instruct", local_server.ServerSettings(cache_mb=2048))
    command = cached.command(Path("/m/model.gguf"))
    model = cli.parse_model_from_args(ModelSettings, parser.parse_args(command[command.index("--model"):]))
    assert (model.cache, model.cache_type, model.cache_size) == (True, "ram", 2048 << 20)


def test_the_prompt_cache_counts_the_logits_its_states_carry():
    """llama-cpp-python's RAM cache counts only llama.cpp's state, not the logits copy each saved
    state carries (0.9 GB for a 1,500-token prompt): the server grew to 23 GB with a 2 GB cache. The
    project's cache counts every byte, so its capacity bounds it (real LlamaState objects)."""
    import numpy as np
    from llama_cpp.llama import LlamaState
    from llama_cpp.llama_cache import LlamaRAMCache

    from conceptagent_ros.llm.prompt_cache import CountingRAMCache, entry_bytes

    vocab = 1000

    def state(tokens: list[int]) -> LlamaState:
        return LlamaState(input_ids=np.array(tokens, dtype=np.intc), scores=np.zeros((len(tokens), vocab), np.single),
                          n_tokens=len(tokens), llama_state=b"k" * 1000, llama_state_size=1000, seed=0)

    one = entry_bytes(state(list(range(100))))
    assert one == 1000 + 100 * vocab * 4 + 100 * np.dtype(np.intc).itemsize
    theirs, ours = LlamaRAMCache(capacity_bytes=2 * one + 10), CountingRAMCache(capacity_bytes=2 * one + 10)
    for cache in (theirs, ours):
        for first in range(0, 500, 100):  # five prompts of 100 tokens, none a prefix of another
            cache[list(range(first, first + 100))] = state(list(range(first, first + 100)))
    assert len(theirs.cache_state) == 5  # it counted 1,000 bytes a state and kept them all
    assert len(ours.cache_state) == 2 and ours.cache_size <= 2 * one + 10
    assert list(range(400, 450)) in ours and list(range(0, 50)) not in ours  # the most recent stay
    big = CountingRAMCache(capacity_bytes=one - 1)
    big[list(range(100))] = state(list(range(100)))
    assert len(big.cache_state) == 0  # larger than the whole capacity: not kept
