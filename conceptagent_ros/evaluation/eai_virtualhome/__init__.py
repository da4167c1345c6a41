"""Embodied Agent Interface's VirtualHome tasks: an external benchmark run on this stack.

data.py (the benchmark's files as tasks), world.py (a task as a world under the benchmark's PDDL
domain), judge.py (scoring as the benchmark scores), agents.py (who decides: Fast Downward, the
simulated model, a chat model), bench.py (the bench and its report). The shipped data is in data/.
"""
