#!/usr/bin/env bash
# Runs k8s_manifests_test.py with Debian's python3 (PyYAML) and the kubectl
# that deploy/install_deps.sh makes sure of.
set -euo pipefail
command -v kubectl > /dev/null || {
  echo "kubectl not found: deploy/install_deps.sh installs kubernetes-client" >&2
  exit 1
}
exec /usr/bin/python3 "${TEST_SRCDIR}/${TEST_WORKSPACE}/tests/k8s/k8s_manifests_test.py"
