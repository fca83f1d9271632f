#!/usr/bin/env bash
# Runs benchmarks/k8s on the e2e cluster of two nodes: builds iolens and its
# image, starts the cluster, applies deploy/rbac.yaml, benchmarks (holding
# the machine-wide real-IO lock, flock /), stops it (also on failure). Root
# only.
#
#   benchmarks/k8s/run.sh [flags of benchmarks/k8s, e.g. -reps 5 -per-node 1,4,8]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
make image >/dev/null
ref=$(tar -xOf bin/iolens-image.tar manifest.json | grep -o '"RepoTags":\["[^"]*"' | sed 's/.*\["//; s/"$//')
export IOLENS_E2E_IMAGE=$ref IOLENS_E2E_AGENT_TAR=$root/bin/iolens-image.tar
export IOLENS_E2E_NODES=${IOLENS_E2E_NODES:-2}
# One cluster per machine: wait for an e2e run to finish.
exec 9<"$root/test/e2e/run.sh"
flock 9
trap 'test/e2e/cluster.sh down; test/e2e/cluster.sh check' EXIT
kubeconfig=$(test/e2e/cluster.sh up | tail -1)
state=${IOLENS_E2E_STATE:-/var/tmp/iolens-e2e}
kubectl=$(test/e2e/build.sh 2>/dev/null | tail -1)/kubectl
"$kubectl" --kubeconfig "$kubeconfig" apply -f deploy/rbac.yaml >/dev/null
until "$kubectl" --kubeconfig "$kubeconfig" -n iolens get serviceaccount default >/dev/null 2>&1; do sleep 0.5; done
go build -o bin/bench-k8s ./benchmarks/k8s
flock / bin/bench-k8s -iolens bin/iolens -kubeconfig "$kubeconfig" -state "$state" "$@"
rm -f bin/bench-k8s
