#!/usr/bin/env bash
# Checks that every C++ and CUDA file git tracks or would track is formatted as .clang-format
# says (Google style, 100 columns). Lists the files that are not and exits 1;
# `tools/check_format.sh --fix` formats them in place. Run by tests/run_all.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

format=$(command -v clang-format || command -v clang-format-14 || true)
if [ -z "$format" ]; then
  echo "check_format: clang-format not found (deploy/install_deps.sh installs it)" >&2
  exit 1
fi

mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h' '*.cu' '*.cuh' 2>/dev/null ||
                     find . -path ./bazel-\* -prune -o \( -name '*.cc' -o -name '*.h' \
                       -o -name '*.cu' -o -name '*.cuh' \) -print)
if [ "${1:-}" = "--fix" ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted (fix: tools/check_format.sh --fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check_format: ${#files[@]} files formatted (.clang-format)"
