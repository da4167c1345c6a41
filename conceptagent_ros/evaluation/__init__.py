"""Evaluation of planners: task suites, benchmarks (with a resumable journal), studies with plots,
the planning-overhead measurement and the example-bank recorder. Above the world: it runs episodes
on sim/, sim/ knows nothing of it."""
