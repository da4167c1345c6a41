"""Two "hosts" on one Linux machine: network namespaces joined by a veth pair, DDS between them.

The robot side runs in one namespace and the planner (and any client) in the other, discovering
each other over the link by multicast, UDP only (two machines share no memory), as a robot and an
operator's laptop do over a network. The link can be cut and restored, and UDP packets can be
dropped at random each way with nftables (`numgen random` rules in each namespace: this machine
has no netem). Everything lives inside the namespaces made here; they are removed on the way out,
also when the body raised, and with them the veth pair and the nftables rules.

Needs root, Linux, iproute2 and (for loss) nft; `why_no_namespaces` / `why_no_loss` say what is
missing so callers can skip or refuse with the reason.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conceptagent_ros.errors import ConceptAgentError
from conceptagent_ros.ros.domains import reserved_domain

LOSS_TABLE = "conceptagent_loss"  # the nftables table this module owns inside each namespace


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=20)


def why_no_namespaces() -> str | None:
    """None where two namespaces can be made here, else why not (for a skip or an error)."""
    if sys.platform != "linux":
        return "network namespaces are Linux's"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    probe = f"ca_probe_{os.getpid()}"
    made = _run("ip", "netns", "add", probe)
    if made.returncode != 0:
        return f"`ip netns add` failed here: {made.stderr.strip()}"
    _run("ip", "netns", "del", probe)
    return None


def why_no_loss() -> str | None:
    """None where packet loss can be injected (nftables), else why not."""
    if shutil.which("nft") is None:
        return "the `nft` command is not installed (Debian/Ubuntu: apt install nftables)"
    return None


@dataclass
class TwoHosts:
    """The two namespaces, the robot's end of the link, and the environment their processes run with."""

    robot_ns: str
    planner_ns: str
    robot_link: str
    env: dict[str, str]
    loss_percent: float = field(default=0.0)

    def command(self, namespace: str, *command: str) -> list[str]:
        return ["ip", "netns", "exec", namespace, *command]

    def conceptagent(self, namespace: str, *args: str) -> list[str]:
        """`conceptagent ARGS...` inside a namespace, with this interpreter and install."""
        return self.command(namespace, sys.executable, "-m", "conceptagent_ros.cli", *args)

    def start(self, namespace: str, *args: str, quiet: bool = True, **popen: Any) -> subprocess.Popen[str]:
        out = subprocess.DEVNULL if quiet else None
        popen.setdefault("stdout", out)
        popen.setdefault("stderr", out)
        return subprocess.Popen(self.conceptagent(namespace, *args), env=self.env, text=True, **popen)

    def link(self, up: bool) -> None:
        """Cut the link (as a cable pulled or a robot out of Wi-Fi range) or restore it."""
        _run("ip", "-n", self.robot_ns, "link", "set", self.robot_link, "up" if up else "down")
        if up:  # the multicast route goes with the link
            _run("ip", "-n", self.robot_ns, "route", "replace", "224.0.0.0/4", "dev", self.robot_link)

    def set_loss(self, percent: float) -> None:
        """Drop `percent` % of UDP packets leaving each namespace, so each way loses that share."""
        if not 0.0 <= percent < 100.0:
            raise ConceptAgentError(f"packet loss is a percentage in [0, 100); got {percent}")
        why = why_no_loss()
        if why and percent > 0:
            raise ConceptAgentError(f"cannot inject packet loss: {why}")
        for namespace in (self.robot_ns, self.planner_ns):
            _run("ip", "netns", "exec", namespace, "nft", "delete", "table", "inet", LOSS_TABLE)
            if percent <= 0:
                continue
            # numgen draws 0..9999 per packet: a drop when below percent * 100, so 0.01 % steps
            threshold = int(round(percent * 100))
            ruleset = (f"table inet {LOSS_TABLE} {{\n"
                       "  chain out {\n"
                       "    type filter hook output priority 0; policy accept;\n"
                       f"    meta l4proto udp numgen random mod 10000 < {threshold} counter drop\n"
                       "  }\n"
                       "}\n")
            done = subprocess.run(["ip", "netns", "exec", namespace, "nft", "-f", "-"], input=ruleset,
                                  capture_output=True, text=True, timeout=20)
            if done.returncode != 0:
                raise ConceptAgentError(f"nft refused the loss rule in {namespace}: {done.stderr.strip()}")
        self.loss_percent = percent

    def dropped_packets(self) -> int:
        """How many UDP packets the loss rules have dropped so far, both namespaces together."""
        total = 0
        for namespace in (self.robot_ns, self.planner_ns):
            listed = _run("ip", "netns", "exec", namespace, "nft", "list", "table", "inet", LOSS_TABLE)
            total += sum(int(word) for line in listed.stdout.splitlines() if "counter packets" in line
                         for word in [line.split("counter packets")[1].split()[0]])
        return total


def _setup_commands(robot_ns: str, planner_ns: str, robot_link: str, planner_link: str,
                    subnet: str) -> Sequence[list[str]]:
    return (["ip", "netns", "add", robot_ns], ["ip", "netns", "add", planner_ns],
            ["ip", "link", "add", robot_link, "type", "veth", "peer", "name", planner_link],
            ["ip", "link", "set", robot_link, "netns", robot_ns],
            ["ip", "link", "set", planner_link, "netns", planner_ns],
            ["ip", "-n", robot_ns, "addr", "add", f"{subnet}.1/24", "dev", robot_link],
            ["ip", "-n", planner_ns, "addr", "add", f"{subnet}.2/24", "dev", planner_link],
            ["ip", "-n", robot_ns, "link", "set", "lo", "up"],
            ["ip", "-n", planner_ns, "link", "set", "lo", "up"],
            ["ip", "-n", robot_ns, "link", "set", robot_link, "up"],
            ["ip", "-n", planner_ns, "link", "set", planner_link, "up"],
            ["ip", "-n", robot_ns, "route", "add", "224.0.0.0/4", "dev", robot_link],
            ["ip", "-n", planner_ns, "route", "add", "224.0.0.0/4", "dev", planner_link])


@contextmanager
def two_hosts(extra_env: dict[str, str] | None = None) -> Iterator[TwoHosts]:
    """Make the two namespaces and the link, reserve a DDS domain; remove them all on the way out."""
    why = why_no_namespaces()
    if why:
        raise ConceptAgentError(f"two hosts need network namespaces: {why}")
    tag = f"{os.getpid() % 10000}"
    robot_ns, planner_ns = f"ca_robot_{tag}", f"ca_planner_{tag}"
    robot_link, planner_link = f"car{tag}", f"cap{tag}"
    subnet = f"10.231.{os.getpid() % 250}"  # inside the namespaces made here, nowhere else
    root = Path(__file__).resolve().parents[3]
    try:
        for command in _setup_commands(robot_ns, planner_ns, robot_link, planner_link, subnet):
            done = _run(*command)
            if done.returncode != 0:
                raise ConceptAgentError(f"{' '.join(command)}: {done.stderr.strip()}")
        with reserved_domain() as domain:
            env = dict(os.environ, ROS_DOMAIN_ID=str(domain), FASTDDS_BUILTIN_TRANSPORTS="UDPv4",
                       PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
            env.pop("ROS_AUTOMATIC_DISCOVERY_RANGE", None)  # the subnet: discovery over the link, not localhost
            env.pop("ROS_LOCALHOST_ONLY", None)
            env.update(extra_env or {})
            yield TwoHosts(robot_ns, planner_ns, robot_link, env)
    finally:
        _run("ip", "netns", "del", robot_ns)  # takes its end of the veth pair, and so the pair, with it
        _run("ip", "netns", "del", planner_ns)
