#!/usr/bin/env bash
# open3d's Linux wheels link libusb-1.0 (for RealSense cameras) and fail to import without it.
# Installs it with apt where this runs as root on Debian/Ubuntu; otherwise says what to install.
set -euo pipefail
if ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so.0'; then exit 0; fi
if [ "$(uname -s)" != Linux ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "open3d needs libusb-1.0: installing libusb-1.0-0 with apt-get"
  (apt-get install -y -q libusb-1.0-0 >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q libusb-1.0-0 >/dev/null))
else
  echo "warning: open3d needs libusb-1.0; install it (Debian/Ubuntu: sudo apt install libusb-1.0-0)" >&2
fi
