#!/usr/bin/env bash
# The speech tests and the speech benchmark say their commands with flite (Debian's small
# text-to-speech; voices slt, rms, kal, awb) and hear them with Whisper. Installs it with apt where
# this runs as root on Debian/Ubuntu; elsewhere those tests fail under CONCEPTAGENT_REQUIRE_SPEECH
# and say why.
set -euo pipefail
if command -v flite >/dev/null; then exit 0; fi
if [ "$(uname -s)" != Linux ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "the speech tests need flite to say their commands: installing it with apt-get"
  (apt-get install -y -q flite >/dev/null 2>&1 \
    || (apt-get update -q >/dev/null && apt-get install -y -q flite >/dev/null)) \
    || echo "warning: could not install flite; the spoken-command tests cannot run" >&2
fi
