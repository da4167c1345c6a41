#!/usr/bin/env bash
# The world-export tests check every exported world with SDFormat's own parser (libsdformat, C++),
# as Gazebo reads it: a small checker (tools/sdf_check.cpp) is compiled against Debian's
# libsdformat-dev. Installs it (and g++, pkg-config) with apt where this runs as root on
# Debian/Ubuntu; elsewhere the parser test skips and says why.
set -euo pipefail
if command -v g++ >/dev/null && pkg-config --list-all 2>/dev/null | grep -q '^sdformat'; then exit 0; fi
if [ "$(uname -s)" != Linux ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "the world-export tests need SDFormat's parser: installing libsdformat-dev, g++ and pkg-config with apt-get"
  (apt-get install -y -q libsdformat-dev g++ pkg-config >/dev/null 2>&1 \
    || (apt-get update -q >/dev/null && apt-get install -y -q libsdformat-dev g++ pkg-config >/dev/null)) \
    || echo "warning: could not install libsdformat-dev; the SDFormat parser test will skip" >&2
fi
