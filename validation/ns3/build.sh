#!/usr/bin/env bash
# Build the aqmlab ns-3 reference program against the ns-3 3.44 pip wheel.
# Idempotent: installs ns3==3.44.post0 with pip only if it is missing, and
# recompiles only when dumbbell.cc (or this script) is newer than the binary.
# Usage: validation/ns3/build.sh [--force]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"
NS3_VERSION="3.44.post0"
NS3_LIBVER="3.44"
OUT_DIR="$HERE/build"
OUT="$OUT_DIR/dumbbell"
FORCE=0
[[ "${1:-}" == "--force" ]] && FORCE=1

# Locate the installed wheel without importing it (importing "ns" starts cppyy,
# which is slow and irrelevant for a C++ build).
ns3_prefix() {
    local loc
    loc="$("$PY" -m pip show ns3 2>/dev/null | sed -n 's/^Location: //p')" || true
    local ver
    ver="$("$PY" -m pip show ns3 2>/dev/null | sed -n 's/^Version: //p')" || true
    if [[ -n "$loc" && "$ver" == "$NS3_VERSION" && -f "$loc/ns3/include/ns3/core-module.h" ]]; then
        echo "$loc/ns3"
    fi
}

PREFIX="$(ns3_prefix)"
if [[ -z "$PREFIX" ]]; then
    echo "[build.sh] installing ns3==$NS3_VERSION with pip (~70 MB download, ~2 min)..." >&2
    WHEEL_ARGS=("ns3==$NS3_VERSION")
    # Use a locally cached wheel if one is provided (NS3_WHEEL=/path/to.whl).
    if [[ -n "${NS3_WHEEL:-}" && -f "${NS3_WHEEL}" ]]; then WHEEL_ARGS=("$NS3_WHEEL"); fi
    "$PY" -m pip install --quiet "${WHEEL_ARGS[@]}" >&2
    PREFIX="$(ns3_prefix)"
    if [[ -z "$PREFIX" ]]; then
        echo "[build.sh] ERROR: ns3 wheel installed but headers not found" >&2
        exit 1
    fi
fi

INC="$PREFIX/include"
LIB="$PREFIX/lib64"
[[ -d "$LIB" ]] || LIB="$PREFIX/lib"

mkdir -p "$OUT_DIR"
if [[ $FORCE -eq 0 && -x "$OUT" && "$OUT" -nt "$HERE/dumbbell.cc" && "$OUT" -nt "$HERE/build.sh" ]]; then
    echo "$OUT"
    exit 0
fi

# Compile definitions match the wheel's CMake export (ns3Targets.cmake):
# release profile with NS_LOG and NS_ASSERT compiled in.
LIBS=()
for m in applications internet traffic-control point-to-point network stats bridge core; do
    LIBS+=("-lns${NS3_LIBVER}-$m")
done
echo "[build.sh] compiling with ${CXX:-g++} (-O2) against $PREFIX" >&2
"${CXX:-g++}" -O2 -std=c++20 -w \
    -D__LINUX__ -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE \
    -I"$INC" "$HERE/dumbbell.cc" -o "$OUT.tmp" \
    -L"$LIB" -Wl,-rpath,"$LIB" -Wl,--no-as-needed "${LIBS[@]}" -Wl,--as-needed -lpthread
mv "$OUT.tmp" "$OUT"
echo "$OUT"
