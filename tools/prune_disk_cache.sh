#!/usr/bin/env bash
# Keeps the Bazel disk cache that .bazelrc names (shared by every checkout
# on this machine) under a bound: past HERALD_DISK_CACHE_GB GiB (default 12)
# it is emptied whole, and the next build fills it again. Bazel 4 itself
# never prunes it.
set -euo pipefail
cache=${HERALD_DISK_CACHE:-$HOME/.cache/herald/bazel-disk-cache}
limit_gb=${HERALD_DISK_CACHE_GB:-12}
[ -d "$cache" ] || exit 0
size_kb=$(du -sk "$cache" | cut -f1)
if [ "$size_kb" -gt $((limit_gb * 1024 * 1024)) ]; then
  echo "prune_disk_cache: $cache holds $((size_kb / 1024 / 1024)) GiB, over ${limit_gb} GiB: emptied"
  rm -rf "$cache"
else
  echo "prune_disk_cache: $cache holds $((size_kb / 1024)) MiB (limit ${limit_gb} GiB)"
fi
