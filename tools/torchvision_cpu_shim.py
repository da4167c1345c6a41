"""Makes PyPI's torchvision 0.28.0 importable beside the CPU build of torch 2.13.0 (DESIGN.md):
its compiled ops are built for CUDA and fail to load, and its import then stops at registering
fake kernels for ops that do not exist. When torchvision is first imported, this defines
`torchvision::nms` with a plain-torch CPU kernel (the one compiled op that ultralytics,
segment-anything and transformers call), stands in empty modules for the two registration
modules, and tells torchvision its ops are loaded.

It is not part of the product: `python tools/torchvision_cpu_shim.py --install` (run by the
Makefile only where `import torchvision` fails that way) puts a one-line .pth into the virtual
environment that arms an import hook; nothing is imported until something imports torchvision.
A user's `pip install torch torchvision` gets a matching pair and needs none of it.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import sysconfig
import types
from pathlib import Path
from typing import Any

PTH_NAME = "conceptagent_torchvision_cpu_shim.pth"
MODULE_NAME = "conceptagent_torchvision_cpu_shim"


def _define_nms() -> Any:
    import torch

    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")

    def nms(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
        if dets.numel() == 0:
            return torch.empty(0, dtype=torch.int64)
        x1, y1, x2, y2 = dets.unbind(1)
        areas = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
        suppressed = torch.zeros(dets.shape[0], dtype=torch.bool)
        keep = []
        for i in scores.argsort(descending=True).tolist():
            if suppressed[i]:
                continue
            keep.append(i)
            inter = ((torch.minimum(x2[i], x2) - torch.maximum(x1[i], x1)).clamp(min=0)
                     * (torch.minimum(y2[i], y2) - torch.maximum(y1[i], y1)).clamp(min=0))
            suppressed |= inter / (areas[i] + areas - inter).clamp(min=1e-12) > iou_threshold
        return torch.tensor(keep, dtype=torch.int64)

    lib.impl("nms", nms, "CPU")
    return lib


class _Hook(importlib.abc.MetaPathFinder):
    """Defines the op before torchvision's first import, and patches `torchvision.extension` each
    time it is executed (a find_spec from an availability check must not use the hook up)."""

    def __init__(self) -> None:
        self.lib: Any = None

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "torchvision" and self.lib is None:
            self.lib = _define_nms()  # kept on the hook, which stays in sys.meta_path: the op lives with it
            for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
                sys.modules.setdefault(name, types.ModuleType(name))
            return None
        if fullname != "torchvision.extension":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        original_exec = spec.loader.exec_module  # type: ignore[attr-defined]

        def exec_module(module: types.ModuleType) -> None:
            original_exec(module)
            module._has_ops = lambda: True  # type: ignore[attr-defined]  # nms is there; no other op is used
            module._check_cuda_version = lambda: -1  # type: ignore[attr-defined]  # a CPU build, as torch is

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def arm() -> None:
    if "torchvision" not in sys.modules and not any(isinstance(f, _Hook) for f in sys.meta_path):
        sys.meta_path.insert(0, _Hook())


def install(site_packages: Path | None = None) -> Path:
    target = site_packages or Path(sysconfig.get_paths()["purelib"])
    (target / f"{MODULE_NAME}.py").write_text(Path(__file__).read_text(encoding="utf-8"), encoding="utf-8")
    pth = target / PTH_NAME
    pth.write_text(f"import {MODULE_NAME}; {MODULE_NAME}.arm()\n", encoding="utf-8")
    return pth


def torchvision_is_broken() -> bool:
    """Does `import torchvision` fail the way a CUDA torchvision beside a CPU torch does?"""
    import subprocess

    probe = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True, text=True)
    return probe.returncode != 0 and "torchvision::nms" in probe.stderr


if __name__ == "__main__":
    if sys.argv[1:] == ["--install"]:
        print(f"torchvision CPU shim armed by {install()}")
    elif sys.argv[1:] == ["--install-if-needed"]:
        (Path(sysconfig.get_paths()["purelib"]) / PTH_NAME).unlink(missing_ok=True)
        if torchvision_is_broken():
            print(f"torchvision's compiled ops do not load beside this torch: CPU shim armed by {install()}")
    else:
        print(__doc__)
        raise SystemExit(2)
