#!/usr/bin/env bash
# The two-host tests and `conceptagent ros bench --loss` drop packets with nftables (there is no netem
# here). Installs the `nft` command with apt where this runs as root on Debian/Ubuntu; elsewhere the
# packet-loss test skips and says why.
set -euo pipefail
if command -v nft >/dev/null; then exit 0; fi
if [ "$(uname -s)" != Linux ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "the packet-loss tests need nftables: installing it with apt-get"
  (apt-get install -y -q nftables >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q nftables >/dev/null)) \
    || echo "warning: could not install nftables; the packet-loss test will skip" >&2
fi
