"""Grounded Decoding (Huang et al., 2023): decode a skill call token by token under the product of
the language model's probability and grounding functions (affordance, safety, preference)."""
