"""Tiny random vision models built here and saved the way real ones are published, so the
perception code loads them through its real paths (from_pretrained with local files only,
segment-anything's registry and torch.load) with HF_HUB_OFFLINE=1. No weights can be downloaded
on these machines; these stand in for OWLv2, OWL-ViT, Grounding DINO, YOLO-World, CLIP and SAM."""
from __future__ import annotations

import functools
from pathlib import Path

WORDS = ["a", "photo", "of", "cup", "mug", "apple", "bowl", "table", "the", "red", "chair", "fridge", "object",
         "remote", "control", ".", "sofa", "book"]


def clip_bpe_tokenizer(folder: Path) -> None:
    """A CLIP-style BPE tokenizer (end-of-word suffix </w>) over WORDS, saved as tokenizer.json."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab: dict[str, int] = {}
    merges: list[tuple[str, str]] = []
    for special in ("<|endoftext|>", "<|startoftext|>"):
        vocab.setdefault(special, len(vocab))
    for word in WORDS:
        symbols = list(word[:-1]) + [word[-1] + "</w>"]
        for s in symbols:
            vocab.setdefault(s, len(vocab))
        current = symbols[0]
        for nxt in symbols[1:]:
            if (current, nxt) not in merges:
                merges.append((current, nxt))
            current += nxt
            vocab.setdefault(current, len(vocab))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<|endoftext|>", end_of_word_suffix="</w>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))


def _clip_tokenizer(folder: Path):  # type: ignore[no-untyped-def]
    from transformers import CLIPTokenizerFast

    clip_bpe_tokenizer(folder)
    return CLIPTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"), unk_token="<|endoftext|>",
                             bos_token="<|startoftext|>", eos_token="<|endoftext|>", pad_token="<|endoftext|>")


def _text_config(vocab_size: int) -> dict[str, int]:
    return dict(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                max_position_embeddings=16, eos_token_id=0, bos_token_id=1, pad_token_id=0)


def build_clip(folder: Path, projection_dim: int = 16) -> Path:
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    torch.manual_seed(0)
    tokenizer = _clip_tokenizer(folder)
    config = CLIPConfig(text_config=_text_config(len(tokenizer)), projection_dim=projection_dim,
                        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                                           image_size=32, patch_size=8))
    CLIPModel(config).save_pretrained(folder)
    processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_yolo_world(path: Path) -> Path:
    """A YOLO-World v2 at the smallest scale with random weights, saved as ultralytics saves a
    checkpoint (its head reads 512-d CLIP text embeddings, as the published ones)."""
    import torch
    from ultralytics import YOLOWorld

    torch.manual_seed(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    YOLOWorld("yolov8n-worldv2.yaml", verbose=False).save(str(path))
    return path


def build_owl(folder: Path, version: int = 2) -> Path:
    import torch
    import transformers as t

    tokenizer = _clip_tokenizer(folder)
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, image_size=64, patch_size=16)
    torch.manual_seed(0)
    if version == 2:
        config = t.Owlv2Config(text_config=_text_config(len(tokenizer)), vision_config=vision, projection_dim=32)
        model = t.Owlv2ForObjectDetection(config)
        image = t.Owlv2ImageProcessor(size={"height": 64, "width": 64})
        t.Owlv2Processor(image_processor=image, tokenizer=tokenizer).save_pretrained(folder)
    else:
        config = t.OwlViTConfig(text_config=_text_config(len(tokenizer)), vision_config=vision, projection_dim=32)
        model = t.OwlViTForObjectDetection(config)
        image = t.OwlViTImageProcessor(size={"height": 64, "width": 64}, crop_size={"height": 64, "width": 64})
        t.OwlViTProcessor(image_processor=image, tokenizer=tokenizer).save_pretrained(folder)
    # Boxes from the heads' priors alone (one box around each image patch), as a trained head gives
    # boxes of sensible size; random weights would give slivers
    with torch.no_grad():
        model.box_head.dense2.weight.zero_()
        model.box_head.dense2.bias.zero_()
    model.save_pretrained(folder)
    return folder


def build_grounding_dino(folder: Path) -> Path:
    import torch
    import transformers as t
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {w: i for i, w in enumerate(specials + WORDS)}
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    tokenizer = t.BertTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    config = t.GroundingDinoConfig(
        backbone_config=t.SwinConfig(embed_dim=16, depths=[1, 1], num_heads=[1, 1], window_size=4, image_size=64,
                                     out_features=["stage1", "stage2"]),
        text_config=t.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=64),
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=64, decoder_ffn_dim=64, num_queries=20, num_feature_levels=2, encoder_n_points=2,
        decoder_n_points=2, use_timm_backbone=False, backbone=None, use_pretrained_backbone=False)
    torch.manual_seed(0)
    t.GroundingDinoForObjectDetection(config).save_pretrained(folder)
    image = t.GroundingDinoImageProcessor(size={"shortest_edge": 64, "longest_edge": 96})
    t.GroundingDinoProcessor(image_processor=image, tokenizer=tokenizer).save_pretrained(folder)
    return folder


TINY_SAM = "vit_tiny_test"


def register_tiny_sam() -> None:
    """A SAM type with a one-block, 32-wide image encoder, registered the way MobileSAM registers
    vit_t: segment-anything's own builder, loading a checkpoint with torch.load."""
    from segment_anything import sam_model_registry
    from segment_anything.build_sam import _build_sam

    sam_model_registry[TINY_SAM] = functools.partial(
        _build_sam, encoder_embed_dim=32, encoder_depth=1, encoder_num_heads=2,
        encoder_global_attn_indexes=[0])


def build_sam_checkpoint(path: Path) -> Path:
    import torch
    from segment_anything import sam_model_registry

    register_tiny_sam()
    torch.manual_seed(0)
    model = sam_model_registry[TINY_SAM]()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), path)
    return path
