#!/usr/bin/env bash
# Runs a Python test of the herald package with Debian's /usr/bin/python3,
# the package (with its generated modules) on PYTHONPATH.
set -euo pipefail
root=${TEST_SRCDIR:-$PWD}/${TEST_WORKSPACE:-herald}
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
export HERALD_RUNFILES=$root
exec /usr/bin/python3 "$root/$1"
