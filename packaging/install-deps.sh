#!/bin/sh
# Installs the Debian 12 packages Fusescope builds and tests with. Idempotent:
# asks apt only for what is missing, so a rerun costs a dpkg query. Works as
# root or through sudo. The CUDA Toolkit is optional and not installed here.
set -eu

PACKAGES="
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev qt6-qpa-plugins libgl-dev
  libgraphviz-dev
  libsqlite3-dev sqlite3
  libopenblas-dev
  libsimdjson-dev nlohmann-json3-dev
  zlib1g-dev libdeflate-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  clang libclang-rt-14-dev clang-format
  fonts-dejavu-core
"

missing=""
for pkg in $PACKAGES; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing="$missing $pkg" ;;
  esac
done

if [ -z "$missing" ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "install-deps: missing packages:$missing; run this script as root or install sudo" >&2
  exit 1
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
