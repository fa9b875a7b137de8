#!/usr/bin/env bash
# Installs the Python package `herald` (python/herald: its sources and the
# modules Bazel generated, //python:herald) into DEST/herald, for the .deb
# (DEST = /usr/lib/python3/dist-packages) and the bundles (share/herald/python).
#
#   install_python.sh REPO_ROOT BAZEL_BIN DEST
set -euo pipefail
root=$1 bin=$2 dest=$3
[ -f "$bin/python/herald/_version.py" ] || { echo "install_python.sh: //python:herald not built in $bin" >&2; exit 1; }
install -d "$dest/herald/_proto"
install -m 0644 "$root"/python/herald/*.py "$dest/herald/"
install -m 0644 "$root"/python/herald/_proto/__init__.py "$bin"/python/herald/_proto/*.py "$dest/herald/_proto/"
install -m 0644 "$bin/python/herald/_version.py" "$dest/herald/"
