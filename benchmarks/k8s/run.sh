#!/usr/bin/env bash
# Runs benchmarks/k8s on the e2e cluster: builds iolens and its image, starts the
# cluster, benchmarks, stops it (also on failure). Root only.
#
#   benchmarks/k8s/run.sh [flags of benchmarks/k8s, e.g. -reps 5 -many 20]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
make image >/dev/null
ref=$(tar -xOf bin/iolens-image.tar manifest.json | grep -o '"RepoTags":\["[^"]*"' | sed 's/.*\["//; s/"$//')
export IOLENS_E2E_IMAGE=$ref IOLENS_E2E_AGENT_TAR=$root/bin/iolens-image.tar
exec 9<"$root/test/e2e/run.sh"
flock 9
trap 'test/e2e/cluster.sh down; test/e2e/cluster.sh check' EXIT
kubeconfig=$(test/e2e/cluster.sh up | tail -1)
state=${IOLENS_E2E_STATE:-/var/tmp/iolens-e2e}
# Class local-path provisions in $state/pv/a: the host runs go next to it.
go run ./bench/k8s -iolens bin/iolens -kubeconfig "$kubeconfig" -host-dir "$state/pv/a" "$@"
