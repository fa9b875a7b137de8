#!/usr/bin/env bash
# Checks that every repository path docs/architecture.md names in backticks
# (a token starting with one of the tree's top-level directories) exists,
# so the map of the tree cannot drift from it. tests/run_all.sh runs it and
# counts it as one test. Prints each missing path with its line; exit 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/architecture.md
tops=$(find . -mindepth 1 -maxdepth 1 -type d ! -name '.*' ! -name 'bazel-*' -printf '%f\n' | paste -sd'|')
missing=0
while IFS=: read -r line path; do
  path=${path//\`/}
  if [ ! -e "$path" ]; then
    echo "check_doc_paths: $doc:$line names $path, which does not exist"
    missing=1
  fi
done < <(grep -noE "\`($tops)/[A-Za-z0-9_./-]*\`" "$doc")
if [ "$missing" -eq 0 ]; then
  echo "check_doc_paths: every path $doc names exists"
fi
exit "$missing"
