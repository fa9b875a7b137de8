#!/usr/bin/env bash
# `systemd-analyze verify` accepts deploy/systemd/*.service (templates checked
# through instance 0) with ExecStart pointing at the real built binaries, and
# prints nothing; a unit with a broken setting is caught by the same check.
set -euo pipefail

runfiles=${TEST_SRCDIR}/${TEST_WORKSPACE}
dir=$(mktemp -d "${TEST_TMPDIR}/units.XXXXXX")
command -v systemd-analyze >/dev/null || {
  echo "systemd-analyze not found: deploy/install_deps.sh installs the systemd package" >&2
  exit 1
}

install_unit() {  # source-name dest-name
  sed -e "s|/usr/local/bin/herald_scheduler|$runfiles/scheduler/herald_scheduler|" \
      -e "s|/usr/local/bin/herald_ps|$runfiles/ps_server/herald_ps|" \
      -e "s|/usr/local/bin/herald_worker|$runfiles/worker/herald_worker|" \
      "$runfiles/deploy/systemd/$1" > "$dir/$2"
}

verify() {  # unit... ; fails on a non-zero exit or any output
  local out
  if ! out=$(cd "$dir" && systemd-analyze verify "${@/#/./}" 2>&1) || [ -n "$out" ]; then
    echo "systemd-analyze verify $*:"
    echo "$out"
    return 1
  fi
}

install_unit herald-scheduler.service herald-scheduler.service
install_unit herald-ps@.service herald-ps@.service
install_unit herald-ps@.service herald-ps@0.service
install_unit herald-worker@.service herald-worker@.service
install_unit herald-worker@.service herald-worker@0.service
verify herald-scheduler.service herald-ps@0.service herald-worker@0.service
grep -q '^User=herald$' "$dir/herald-scheduler.service"
grep -q '^Restart=on-failure$' "$dir/herald-ps@0.service"
grep -q 'EnvironmentFile=-/etc/herald/worker.env' "$dir/herald-worker@0.service"

# The check catches a broken unit.
sed 's/^Restart=on-failure/Restart=sometimes/' "$dir/herald-scheduler.service" > "$dir/broken.service"
if verify broken.service >/dev/null; then
  echo "a broken unit passed the check"
  exit 1
fi
echo "systemd units verified"
