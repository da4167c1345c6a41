"""Oracles that stand in for a language model: the offline backend (symbolic planning over the
belief) and the simulated model that errs at seeded rates. They live beside the planning code they
are built on; llm/ holds real model backends only."""
