"""Grounded Decoding: grounding on partial commands, beam search, the LogitsProcessor inside a real
transformers `generate()` on a tiny random model, and the completions-endpoint variant."""
from __future__ import annotations

import pytest
from planner_fixtures import C, setup

from conceptagent_ros.llm.spec import LLMSpec
from conceptagent_ros.planning.planners import PlannerSpec, build_planner
from conceptagent_ros.planning.planners.grounded_decoding.decoder import grounded_beam_search
from conceptagent_ros.planning.planners.grounded_decoding.grounding import (
    AffordanceGrounding,
    CallSpace,
    PreferenceGrounding,
    SafetyGrounding,
    parse_partial,
)
from conceptagent_ros.planning.planners.grounded_decoding.language_models import CandidateMixtureLM
from conceptagent_ros.planning.prompts import grounded_decoding_prompt
from conceptagent_ros.skills.contract import SkillCall


def space_for(s):
    return CallSpace(s.world.skills, s.graph.symbolic_state(), s.verifier)


def test_partial_commands_parse():
    assert parse_partial("pic") == parse_partial("pic")
    p = parse_partial("place(apple_1, fri")
    assert p.skill_prefix == "place" and p.args == ("apple_1",) and p.current == "fri" and not p.closed
    assert parse_partial("open(fridge_1)").closed
    assert not parse_partial("open(fridge_1))").valid and not parse_partial("Open(").valid


def test_affordance_scores_partial_commands_by_their_feasible_completions():
    s = setup()
    affordance = AffordanceGrounding(space_for(s))
    assert affordance("navigate_to(fri") == 1.0  # navigate_to(fridge_1) is feasible
    assert affordance("pick(apple_1") == affordance.infeasible_weight  # exists, out of reach
    assert affordance("pick(unicorn") == 0.0  # no such object: cannot be decoded at all
    assert affordance("fly(") == 0.0 and affordance("nav") == 1.0


def lm(*calls: str) -> CandidateMixtureLM:
    s = setup()
    return CandidateMixtureLM([C(c) for c in calls], [sk.name for sk in s.world.skills] + list(s.graph.objects))


def test_grounding_alone_steers_the_decoder_to_a_feasible_call():
    s = setup()
    model = lm("pick(apple_1)", "navigate_to(apple_1)")  # the model's favourite is infeasible now
    ungrounded = grounded_beam_search(model, "", [], beams=1)
    assert ungrounded.text == "pick(apple_1)"
    grounded = grounded_beam_search(model, "", [AffordanceGrounding(space_for(s))], beams=1)
    assert SkillCall.parse(grounded.text) == C("navigate_to(apple_1)")
    beam = grounded_beam_search(model, "", [AffordanceGrounding(space_for(s))], beams=4)
    assert s.verifier.is_feasible(SkillCall.parse(beam.text), s.graph.symbolic_state())


def test_safety_is_hard_and_preference_is_soft():
    s = setup()
    space = space_for(s)
    model = lm("navigate_to(fridge_1)", "navigate_to(apple_1)")
    safe = grounded_beam_search(model, "", [AffordanceGrounding(space), SafetyGrounding(space, {"fridge"},
                                {"fridge_1": "fridge"})])
    assert "fridge_1" not in safe.text and safe.complete
    preferred = grounded_beam_search(model, "", [AffordanceGrounding(space), PreferenceGrounding(space, {"apple_1"})])
    assert preferred.text == "navigate_to(apple_1)"


def test_decoding_over_a_completions_endpoint_with_top_logprobs(chat_server, monkeypatch):
    table = {"": {"pick": -0.1, "navigate_to": -2.0}, "pick": {"(": -0.01}, "navigate_to": {"(": -0.01},
             "pick(": {"unicorn_1": -0.1, "apple_1": -1.0},
             "navigate_to(": {"unicorn_1": -0.1, "apple_1": -0.5, "fridge_1": -0.7}}

    def next_token(prompt: str) -> dict[str, float]:
        prefix = prompt.rsplit("Next action:", 1)[-1].strip()
        return table.get(prefix, {")": -0.01, ",": -3.0})

    server = chat_server([], next_token_logprobs=next_token)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    s = setup()
    built = build_planner(PlannerSpec.parse("grounded-decoding"), LLMSpec("openai", "tiny"), s.world.domain,
                          s.world.skills)
    proposal = built.proposer.propose(s.context())
    assert proposal.call == C("navigate_to(apple_1)")  # the hallucinated unicorn and the unreachable pick lose
    assert all(r.get("logprobs") and r["max_tokens"] == 1 for r in server.requests)
    assert proposal.prompt_tokens > 0 and built.proposer.usage.calls == len(server.requests)


# -- a tiny random causal LM, saved and loaded with the real transformers code --------------------
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers

    s = setup()
    words = [sk.name for sk in s.world.skills] + sorted(s.world.scene.objects) + sorted(s.world.scene.rooms)
    vocab = {w: i for i, w in enumerate(["<pad>", "<eos>", "<unk>", "(", ")", ",", "()", *dict.fromkeys(words)])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>",
                                                unk_token="<unk>")
    paths = []
    for seed in range(3):
        torch.manual_seed(seed)
        config = transformers.GPT2Config(vocab_size=len(vocab), n_positions=512, n_embd=32, n_layer=1, n_head=2,
                                         eos_token_id=1, bos_token_id=1, pad_token_id=0)
        path = tmp_path_factory.mktemp(f"tiny_gpt2_{seed}")
        transformers.GPT2LMHeadModel(config).save_pretrained(path)
        fast.save_pretrained(path)
        paths.append(str(path))
    return paths


def test_logits_processor_inside_generate_yields_feasible_calls_from_a_random_model(tiny_models, monkeypatch):
    from conceptagent_ros.planning.planners.grounded_decoding.hf import HFGroundedDecoder, ungrounded_generate
    from conceptagent_ros.planning.proposal import TokenUsage

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    s = setup()
    context = s.context()
    prompt = grounded_decoding_prompt(context)
    state = context.state
    ungrounded_feasible = []
    for path in tiny_models:
        decoder = HFGroundedDecoder(path, TokenUsage())
        for beams in (1, 3):
            result = decoder.decode(prompt, [AffordanceGrounding(space_for(s))], beams=beams, top_k=50)
            assert result.complete, result.text
            assert s.verifier.is_feasible(SkillCall.parse(result.text), state), result.text
        raw = ungrounded_generate(decoder, prompt)
        try:
            ungrounded_feasible.append(s.verifier.is_feasible(SkillCall.parse(raw), state))
        except (ValueError, KeyError):
            ungrounded_feasible.append(False)
    assert not all(ungrounded_feasible)  # without grounding, random weights give no usable command


def test_hf_backend_runs_as_a_planner(tiny_models, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    s = setup()
    built = build_planner(PlannerSpec.parse("grounded-decoding:top_k=50"), LLMSpec("hf", tiny_models[0]),
                          s.world.domain, s.world.skills)
    proposal = built.proposer.propose(s.context())
    assert proposal.call is not None and s.verifier.is_feasible(proposal.call, s.graph.symbolic_state())
