#!/bin/sh
# Runs the Herald bundle's libexec/herald/@BINARY@ with the bundle's
# libraries (lib/herald-env.sh), from any directory, with its arguments.
HERALD_ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
. "$HERALD_ROOT/lib/herald-env.sh"
exec "$HERALD_ROOT/libexec/herald/@BINARY@" "$@"
