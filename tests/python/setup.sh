#!/usr/bin/env bash
# Creates .venv/ at the repository root with the real MAVLink clients the
# integration tests fly against, pinned, from PyPI. Idempotent: an existing
# venv with the pinned versions is kept.
set -euo pipefail
cd "$(dirname "$0")/../.."
REQ=tests/python/requirements.txt
if ! command -v python3 >/dev/null; then
    echo "python3 is needed (apt-get install python3 python3-venv)" >&2
    exit 1
fi
if [ -x .venv/bin/python ]; then
    if .venv/bin/python - "$REQ" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
ok = True
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        ok &= version(name) == want
    except PackageNotFoundError:
        ok = False
sys.exit(0 if ok else 1)
PY
    then
        echo "tests/python: .venv is up to date"
        UP_TO_DATE=1
    fi
fi
if [ -z "${UP_TO_DATE:-}" ]; then
if ! python3 -m venv .venv 2>/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
        python3 -m venv .venv
    else
        echo "python3 -m venv failed: install python3-venv" >&2
        exit 1
    fi
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r "$REQ"
echo "tests/python: installed $(sed 's/#.*//;/^$/d' "$REQ" | tr '\n' ' ')into .venv"
fi

# AirSim's client in its own venv (see requirements-airsim.txt).
AREQ=tests/python/requirements-airsim.txt
if .venv-airsim/bin/python -c "import airsim, msgpackrpc, msgpack._unpacker" 2>/dev/null \
    && .venv-airsim/bin/python -m pip freeze 2>/dev/null | grep -qix "$(grep '^airsim==' "$AREQ")"; then
    echo "tests/python: .venv-airsim is up to date"
    exit 0
fi
python3 -m venv .venv-airsim
.venv-airsim/bin/python -m pip install --quiet --upgrade pip setuptools wheel
.venv-airsim/bin/python -m pip install --quiet "$(grep '^Cython==' "$AREQ")"
# msgpack-python with its C extension (see requirements-airsim.txt).
MSGPACK=$(grep '^msgpack-python==' "$AREQ")
SDIST=$(mktemp -d)
trap 'rm -rf "$SDIST"' EXIT
.venv-airsim/bin/python -m pip download --quiet --no-deps --no-binary :all: -d "$SDIST" "$MSGPACK"
tar -xzf "$SDIST"/msgpack*.tar.gz -C "$SDIST"
rm -f "$SDIST"/msgpack*/msgpack/*.cpp
.venv-airsim/bin/python -m pip install --quiet --no-cache-dir --no-build-isolation "$SDIST"/msgpack*/
.venv-airsim/bin/python -c "import msgpack._unpacker"
grep -v '^airsim==' "$AREQ" | .venv-airsim/bin/python -m pip install --quiet -r /dev/stdin
.venv-airsim/bin/python -m pip install --quiet --no-build-isolation "$(grep '^airsim==' "$AREQ")"
echo "tests/python: installed AirSim's client into .venv-airsim"
