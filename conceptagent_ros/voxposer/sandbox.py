"""The only place LLM-written code runs: an AST check, restricted builtins, and a worker process
with a wall-clock and a memory limit.

VoxPoser's reference code `exec`s the model's reply with the full interpreter behind it. Here a
program must first pass `check_program`:
- no import statements, no `global` / `nonlocal`, no class definitions, no async or generators
  (their frame objects reach the interpreter);
- no name or attribute with a leading underscore (dunders, private helpers);
- attributes only from an allow-list (ndarray and NumPy-namespace members the map programs use,
  the observation fields, plain container/string methods): `str.format` (whose replacement fields
  walk attributes unchecked), `ndarray.tofile` / `.dump` / `.ctypes`, `gi_frame`, `f_globals`, ...
  are all outside it;
- no call of open / exec / eval / compile / getattr / setattr / globals / vars / ... (they are
  not in the builtins handed in either);
- no assignment to attributes (nothing the API hands in can be patched);
- no class patterns in `match` statements (they read attributes by name, unseen by the above);
- print() is bounded per run (lines and bytes): past the bound the program stops, and says so.
NumPy is handed in as `np`, a namespace of chosen functions rather than the module (the module
reaches `np.load`, `np.ctypeslib`, `np.lib`, ...).

The checked program then runs in a spawned worker process (not forked: a ROS node's DDS sockets
and threads stay behind) whose address space is capped with RLIMIT_AS; the parent waits on a pipe
for at most the wall-clock limit and kills and restarts the worker when it is exceeded. Every
failure is a `SandboxError` whose message is fit to be fed back to the LLM.
"""
from __future__ import annotations

import ast
import resource
import socket
import subprocess
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from conceptagent_ros.errors import ConceptAgentError

FORBIDDEN_CALLS = frozenset({
    "open", "exec", "eval", "compile", "getattr", "setattr", "delattr", "hasattr", "globals", "locals", "vars",
    "dir", "input", "breakpoint", "help", "memoryview", "type", "object", "super", "classmethod", "staticmethod",
    "property", "__import__", "exit", "quit", "id", "callable", "issubclass",
})

SAFE_BUILTIN_NAMES = (
    "abs", "all", "any", "bool", "dict", "enumerate", "float", "int", "isinstance", "len", "list", "map", "max",
    "min", "filter", "range", "reversed", "round", "set", "sorted", "str", "sum", "tuple", "zip", "print",
    "Exception", "ValueError", "KeyError", "IndexError", "TypeError", "ZeroDivisionError", "True", "False", "None",
)

# Attributes a map program may read: NumPy namespace members (see `numpy_namespace`), ndarray
# members, observation fields, and plain container/string methods.
NUMPY_FUNCTIONS = (
    "array", "asarray", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "empty_like", "arange",
    "linspace", "meshgrid", "clip", "sqrt", "abs", "absolute", "min", "max", "amin", "amax", "argmin", "argmax",
    "mean", "median", "sum", "prod", "cumsum", "stack", "vstack", "hstack", "concatenate", "where", "exp", "log",
    "cos", "sin", "tan", "arctan2", "arccos", "arcsin", "deg2rad", "rad2deg", "round", "floor", "ceil", "minimum",
    "maximum", "isclose", "allclose", "all", "any", "nonzero", "argwhere", "cross", "dot", "sign", "unravel_index",
    "logical_and", "logical_or", "logical_not", "isnan", "isfinite", "nan_to_num", "indices", "square", "power",
    "std", "var", "sort", "argsort", "unique", "count_nonzero", "expand_dims", "squeeze", "transpose", "reshape",
    "int32", "int64", "float32", "float64", "bool_", "pi", "inf", "nan", "newaxis", "linalg", "norm",
)
NDARRAY_MEMBERS = (
    "shape", "ndim", "size", "dtype", "T", "copy", "astype", "reshape", "flatten", "ravel", "sum", "mean", "min",
    "max", "argmin", "argmax", "any", "all", "clip", "round", "fill", "nonzero", "tolist", "item", "std",
    "transpose", "squeeze",
)
OBSERVATION_FIELDS = ("name", "position", "aabb", "normal", "occupancy_map", "points", "quaternion")
CONTAINER_METHODS = (
    "append", "extend", "insert", "pop", "index", "count", "sort", "get", "items", "keys", "values", "lower",
    "upper", "strip", "split", "startswith", "endswith", "replace", "join",
)
ALLOWED_ATTRIBUTES = frozenset(NUMPY_FUNCTIONS + NDARRAY_MEMBERS + OBSERVATION_FIELDS + CONTAINER_METHODS)

FORBIDDEN_NODES: dict[type, str] = {
    ast.Import: "import statements", ast.ImportFrom: "import statements", ast.Global: "global",
    ast.Nonlocal: "nonlocal", ast.ClassDef: "class definitions", ast.AsyncFunctionDef: "async functions",
    ast.Await: "await", ast.AsyncFor: "async for", ast.AsyncWith: "async with", ast.Yield: "generators",
    ast.YieldFrom: "generators", ast.GeneratorExp: "generator expressions (use a list comprehension)",
    ast.With: "with statements", ast.Try: "try statements", ast.Delete: "del statements",
}

DEFAULT_TIMEOUT_S = 2.0
DEFAULT_MEMORY_BYTES = 1 << 30  # on top of the worker's own address space after its imports
MAX_SOURCE_CHARS = 20_000


class SandboxError(ConceptAgentError):
    """A program was refused, raised, ran too long, used too much memory, or returned garbage.

    `kind` is one of rejected, raised, timeout, memory, output, crashed, bad_result; str(error) is one
    paragraph meant to go back to the LLM as feedback."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def check_program(source: str, provided_names: frozenset[str] | set[str] = frozenset()) -> ast.Module:
    """Parse and vet `source`; raise SandboxError('rejected', ...) naming the first offence and its line."""
    if not isinstance(source, str):
        raise SandboxError("rejected", f"program must be text, got {type(source).__name__}")
    if len(source) > MAX_SOURCE_CHARS:
        raise SandboxError("rejected", f"program is {len(source)} characters; the limit is {MAX_SOURCE_CHARS}")
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        raise SandboxError("rejected", f"syntax error at line {exc.lineno}: {exc.msg}") from None
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        for forbidden, what in FORBIDDEN_NODES.items():
            if isinstance(node, forbidden):
                raise SandboxError("rejected", f"line {line}: {what} are not allowed in map programs")
        if isinstance(node, ast.Name):
            if node.id.startswith("_"):
                raise SandboxError("rejected", f"line {line}: names starting with '_' are not allowed ({node.id})")
            if node.id in FORBIDDEN_CALLS and node.id not in provided_names:
                raise SandboxError("rejected", f"line {line}: '{node.id}' is not available in map programs")
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                raise SandboxError("rejected", f"line {line}: attribute '{node.attr}' is not allowed")
            if node.attr not in ALLOWED_ATTRIBUTES:
                raise SandboxError("rejected", f"line {line}: attribute '.{node.attr}' is not available in map programs")
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                raise SandboxError("rejected", f"line {line}: assigning to attributes ('.{node.attr} = ...') is not allowed")
        elif isinstance(node, ast.MatchClass):
            # A class pattern reads attributes by name without an ast.Attribute node: its keywords
            # (`case int(__class__=c)`, `case str(format=f)`: a bound str.format walks attributes in
            # its format string) and, for positional sub-patterns, whatever the class's
            # __match_args__ names. No map program needs one: refused whole.
            named = ", ".join(node.kwd_attrs)
            raise SandboxError("rejected", f"line {line}: class patterns in match statements are not allowed"
                                           + (f" (they read attributes by name: {named})" if named else ""))
        elif isinstance(node, ast.FunctionDef) and node.decorator_list:
            raise SandboxError("rejected", f"line {line}: decorators are not allowed")
        elif isinstance(node, ast.arg) and node.arg.startswith("_"):
            raise SandboxError("rejected", f"line {line}: names starting with '_' are not allowed ({node.arg})")
    return tree


MAX_OUTPUT_LINES = 200
MAX_OUTPUT_BYTES = 20_000


class OutputBudget:
    """print() inside the sandbox: each call kept short and written to the worker's stderr, all the
    output of one request (a program and the programs it calls) bounded in lines and bytes. Past
    either bound the output is cut and the program stopped with a SandboxError that says so (a
    print loop would otherwise pour megabytes into the caller's terminal until the time limit)."""

    def __init__(self, lines: int = MAX_OUTPUT_LINES, size: int = MAX_OUTPUT_BYTES) -> None:
        self.lines, self.size = lines, size
        self.reset()

    def reset(self) -> None:
        self.used_lines, self.used_bytes = 0, 0

    def print(self, *args: Any, **_: Any) -> None:
        text = " ".join(str(a) for a in args)[:500] + "\n"
        self.used_lines += text.count("\n")
        self.used_bytes += len(text.encode("utf-8", "replace"))
        if self.used_lines > self.lines or self.used_bytes > self.size:
            sys.stderr.write(f"[sandbox: output cut after {self.lines} lines or {self.size} bytes]\n")
            raise SandboxError("output", f"the program printed more than {self.lines} lines or {self.size} bytes; "
                                         "its output was cut there and the program stopped (a map program returns "
                                         "its result in ret_val; print a few lines at most)")
        sys.stderr.write(text)


OUTPUT = OutputBudget()  # the worker resets it for each request


def safe_builtins() -> dict[str, Any]:
    import builtins
    table = {name: getattr(builtins, name) for name in SAFE_BUILTIN_NAMES if hasattr(builtins, name)}
    table["print"] = OUTPUT.print
    return table


# -- the worker ----------------------------------------------------------------------------------

# What the worker calls with each checked program: (program, its LMP name, the request's payload)
# -> the reply. Named by its import path, since the worker is a fresh interpreter.
TaskRunner = Callable[[ast.Module, str, Any], Any]


@dataclass(frozen=True)
class SandboxLimits:
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_bytes: int = DEFAULT_MEMORY_BYTES


def _address_space_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[0])
    return pages * resource.getpagesize()


def _worker_main(conn: Connection, runner_path: str, memory_bytes: int) -> None:
    """Child process: import the runner, cap the address space, then answer requests forever."""
    module_name, _, attr = runner_path.rpartition(".")
    import importlib
    runner: TaskRunner = getattr(importlib.import_module(module_name), attr)
    try:
        limit = _address_space_bytes() + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError):  # not Linux: the wall clock still applies
        pass
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        source, name, payload = request
        OUTPUT.reset()
        try:
            tree = check_program(source)  # checked again here: the worker trusts no caller
            reply: tuple[str, Any] = ("ok", runner(tree, name, payload))
        except SandboxError as exc:
            reply = ("error", (exc.kind, str(exc)))
        except MemoryError:
            reply = ("error", ("memory", f"{name}: ran out of memory (limit {memory_bytes >> 20} MiB)"))
        except RecursionError:
            reply = ("error", ("raised", f"{name}: recursion too deep"))
        except Exception as exc:  # the program's own exception: reported with its line in the program
            line = _program_line(exc)
            where = f" at line {line}" if line else ""
            reply = ("error", ("raised", f"{name}: {type(exc).__name__}{where}: {exc}"[:600]))
        try:
            conn.send(reply)
        except MemoryError:
            conn.send(("error", ("memory", f"{name}: result too large to return")))


def _program_line(exc: BaseException) -> int | None:
    frames = traceback.extract_tb(exc.__traceback__)
    lines = [f.lineno for f in frames if f.filename == "<map program>"]
    return lines[-1] if lines else None


@dataclass
class Sandbox:
    """A worker process that runs checked programs through `runner_path` (a `TaskRunner`).

    Use as a context manager; `run` blocks at most `limits.timeout_s` (plus transfer)."""

    runner_path: str
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    _process: Any = None
    _conn: Connection | None = None
    restarts: int = 0

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        # A fresh interpreter (`python -m ...sandbox_worker FD RUNNER BYTES`), not multiprocessing: spawn
        # would re-import the caller's __main__, and fork would copy a ROS node's threads and sockets.
        parent, child = socket.socketpair()
        fd = child.fileno()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "conceptagent_ros.voxposer.sandbox_worker", str(fd), self.runner_path,
             str(self.limits.memory_bytes)], pass_fds=(fd,), stdin=subprocess.DEVNULL, close_fds=True)
        child.close()
        self._conn = Connection(parent.detach())

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=5)
            self._process = None

    def _restart(self) -> None:
        self.close()
        self.restarts += 1
        self.start()

    def run(self, source: str, name: str, payload: Any, provided_names: frozenset[str] = frozenset()) -> Any:
        """Check `source` here (cheap refusals never reach the worker), then run it there."""
        check_program(source, provided_names)
        if self._conn is None:
            self.start()
        assert self._conn is not None
        try:
            self._conn.send((source, name, payload))
            ready = self._conn.poll(self.limits.timeout_s)
        except (BrokenPipeError, OSError):
            self._restart()
            raise SandboxError("crashed", f"{name}: the sandbox worker had died; restarted, try again") from None
        if not ready:
            self._restart()
            raise SandboxError("timeout", f"{name}: still running after {self.limits.timeout_s:.1f} s; stopped "
                                          "(an endless loop, or far too much work for a map program)")
        try:
            status, value = self._conn.recv()
        except (EOFError, OSError):
            code = self._process.poll() if self._process is not None else None
            self._restart()
            raise SandboxError("crashed", f"{name}: the sandbox worker died (exit code {code})") from None
        if status == "error":
            kind, message = value
            raise SandboxError(kind, message)
        return value


def run_checked(tree: ast.Module, env: Mapping[str, Any]) -> dict[str, Any]:
    """Execute a checked program with restricted builtins and `env` as its globals; return them."""
    scope: dict[str, Any] = {"__builtins__": safe_builtins(), **env}
    exec(compile(tree, "<map program>", "exec"), scope)  # noqa: S102 - the one sanctioned exec, AST-checked
    return scope

