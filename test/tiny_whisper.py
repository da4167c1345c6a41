"""A tiny Whisper built here, saved with save_pretrained and loaded back through the real pipeline.

Its weights are set by hand so that it transcribes any audio to one sentence: token embeddings are
one-hot, attention and feed-forward outputs are zero (the residual stream carries the current
token), and the output projection maps each token to the next one of the sentence. That makes the
speech tests check a real transcript rather than whatever a random network emits.
"""
from __future__ import annotations

from pathlib import Path

SPECIALS = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|translate|>",
            "<|notimestamps|>", "<|nocaptions|>", "<|startofprev|>", "<|startoflm|>"]


def build_tiny_whisper(folder: Path, sentence: str = "open the fridge") -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import (
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizerFast,
    )

    words = sentence.split()
    pieces = [words[0]] + ["Ġ" + w for w in words[1:]]
    vocab = {p: i for i, p in enumerate(dict.fromkeys(pieces + ["Ġcup", "cup", "put"]))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(SPECIALS)
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    tokenizer = WhisperTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"), unk_token="<|endoftext|>",
                                     bos_token="<|endoftext|>", eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                     additional_special_tokens=SPECIALS[1:])
    ids = dict(zip(SPECIALS, tokenizer.convert_tokens_to_ids(SPECIALS)))
    d_model = 32
    assert len(tokenizer) <= d_model
    config = WhisperConfig(
        vocab_size=len(tokenizer), num_mel_bins=80, d_model=d_model, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        max_source_positions=1500, max_target_positions=32, pad_token_id=ids["<|endoftext|>"],
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|endoftext|>"],
        decoder_start_token_id=ids["<|startoftranscript|>"], suppress_tokens=[], begin_suppress_tokens=[],
        tie_word_embeddings=False,
    )
    model = WhisperForConditionalGeneration(config).eval()
    chain = [ids["<|startoftranscript|>"], ids["<|notimestamps|>"], *(vocab[p] for p in pieces), ids["<|endoftext|>"]]
    decoder = model.model.decoder
    with torch.no_grad():
        decoder.embed_tokens.weight.zero_()
        decoder.embed_tokens.weight[:, : len(tokenizer)] = torch.eye(len(tokenizer)) * 4.0
        decoder.embed_positions.weight.zero_()
        for layer in decoder.layers:
            for linear in (layer.self_attn.out_proj, layer.encoder_attn.out_proj, layer.fc2):
                linear.weight.zero_()
                if linear.bias is not None:
                    linear.bias.zero_()
        model.proj_out.weight.zero_()
        for current, following in zip(chain, chain[1:]):
            model.proj_out.weight[following, current] = 10.0
    model.generation_config.no_timestamps_token_id = ids["<|notimestamps|>"]
    model.generation_config.decoder_start_token_id = ids["<|startoftranscript|>"]
    model.generation_config.max_length = 16
    model.generation_config.is_multilingual = False
    model.save_pretrained(folder)
    WhisperProcessor(WhisperFeatureExtractor(feature_size=80), tokenizer).save_pretrained(folder)
    return folder
