#!/usr/bin/env bash
# Creates .venv/ at the repository root with the real MAVLink clients the
# integration tests fly against, pinned, from PyPI, and .venv-airsim/ with
# AirSim's client. Idempotent: a venv with the pinned versions is kept.
#
# The venvs are made and filled by uv (Astral's installer, from PyPI): it
# installs these wheels in about a sixth of pip's CPU time, which on a
# two-core machine is time the Rust build gets back. A uv on PATH is used;
# otherwise the pinned one below is installed into .venv-tools/.
set -euo pipefail
cd "$(dirname "$0")/../.."
REQ=tests/python/requirements.txt
AREQ=tests/python/requirements-airsim.txt
UV_VERSION=0.13.8
if ! command -v python3 >/dev/null; then
    echo "python3 is needed (apt-get install python3 python3-venv)" >&2
    exit 1
fi
PYTHON=$(command -v python3)
# uv uses this machine's Python, never downloads one, and trusts the
# certificates pip is told to trust.
export UV_PYTHON_DOWNLOADS=never
if [ -n "${PIP_CERT:-}" ] && [ -z "${SSL_CERT_FILE:-}" ]; then
    export SSL_CERT_FILE="$PIP_CERT"
fi

# True when the venv's Python imports every pinned package at its version.
pinned() {
    [ -x "$1/bin/python" ] || return 1
    "$1/bin/python" - "$2" <<'PY'
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
}

# The uv to install with: on PATH, or the pinned one in .venv-tools/.
find_uv() {
    if command -v uv >/dev/null; then
        UV=$(command -v uv)
        return
    fi
    UV=.venv-tools/bin/uv
    if [ -x "$UV" ] && "$UV" --version | grep -q " $UV_VERSION\$"; then
        return
    fi
    if ! "$PYTHON" -m venv .venv-tools 2>/dev/null; then
        if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
            apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
            "$PYTHON" -m venv .venv-tools
        else
            echo "python3 -m venv failed: install python3-venv" >&2
            exit 1
        fi
    fi
    .venv-tools/bin/python -m pip install --quiet "uv==$UV_VERSION"
}

if pinned .venv "$REQ"; then
    echo "tests/python: .venv is up to date"
else
    find_uv
    "$UV" venv --quiet --clear --python "$PYTHON" .venv
    "$UV" pip install --quiet --python .venv/bin/python -r "$REQ"
    echo "tests/python: installed $(sed 's/#.*//;/^$/d' "$REQ" | tr '\n' ' ')into .venv"
fi

# AirSim's client in its own venv (see requirements-airsim.txt for why).
if pinned .venv-airsim "$AREQ" \
    && .venv-airsim/bin/python -c "import airsim, msgpackrpc, msgpack._unpacker" 2>/dev/null; then
    echo "tests/python: .venv-airsim is up to date"
    exit 0
fi
find_uv
APY=.venv-airsim/bin/python
"$UV" venv --quiet --clear --python "$PYTHON" .venv-airsim
"$UV" pip install --quiet --python "$APY" setuptools wheel "$(grep '^Cython==' "$AREQ")"
# msgpack-python with its C extension, cythonized afresh with Cython 0.29
# from its sdist (see requirements-airsim.txt).
MSGPACK=$(grep '^msgpack-python==' "$AREQ")
SDIST=$(mktemp -d)
trap 'rm -rf "$SDIST"' EXIT
"$UV" tool run --quiet --python "$PYTHON" pip download --quiet --no-deps --no-binary :all: -d "$SDIST" "$MSGPACK"
tar -xzf "$SDIST"/msgpack*.tar.gz -C "$SDIST"
rm -f "$SDIST"/msgpack*/msgpack/*.cpp
"$UV" pip install --quiet --python "$APY" --no-cache --no-build-isolation "$SDIST"/msgpack*/
"$APY" -c "import msgpack._unpacker"
grep -v '^airsim==' "$AREQ" >"$SDIST/rest.txt"
"$UV" pip install --quiet --python "$APY" -r "$SDIST/rest.txt"
"$UV" pip install --quiet --python "$APY" --no-build-isolation "$(grep '^airsim==' "$AREQ")"
echo "tests/python: installed AirSim's client into .venv-airsim"
