#!/usr/bin/env bash
# The iolens Kubernetes end-to-end test ('make e2e'): brings a real
# cluster of IOLENS_E2E_NODES nodes (default 2) up (cluster.sh), loads the
# agent image into each node's containerd, runs the Go e2e tests against it
# (test/e2e/*_test.go), and brings the cluster down again, even when a test
# fails or the run is interrupted. Then 'cluster.sh check' must find the
# host as it was.
#
#   test/e2e/run.sh BIN/iolens BIN/iolens-image.tar
#
# IOLENS_E2E_RUN=REGEXP runs only the tests go test -run selects, as in
# IOLENS_E2E_RUN=TestCluster/diagnose make e2e.
#
# Needs root (network namespace, loop devices, mounts, cgroups). Runs of
# this script on one machine wait for each other, and for real-IO tests
# that measure the machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# = 2 ] || { echo "usage: $0 IOLENS_BINARY IMAGE_TAR" >&2; exit 2; }
iolens=$(realpath "$1")
tarball=$(realpath "$2")
if [ "$(id -u)" != 0 ]; then
	echo "e2e: needs root (network namespace, loop devices, mounts); skipped" >&2
	exit 0
fi

# One cluster per machine: wait for another run to finish.
exec 9<"$0"
flock 9
# A real-IO test that measures the machine (realio.Exclusive, or a
# benchmark under 'flock /') waits for the cluster to be gone, and the
# cluster for it; shared real-IO tests (in RAM, under caps) run beside it.
# The cluster's daemons and the tests get neither lock's descriptor: a
# daemon that outlived the run must not hold them.
exec 8</
flock -s 8

t0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# The image reference is in the tarball's manifest.
ref=$(tar -xOf "$tarball" manifest.json | grep -o '"RepoTags":\["[^"]*"' | sed 's/.*\["//; s/"$//')
[ -n "$ref" ] || { echo "e2e: no image reference in $tarball" >&2; exit 1; }
export IOLENS_E2E_IMAGE=$ref IOLENS_E2E_AGENT_TAR=$tarball
# The tests need both nodes.
export IOLENS_E2E_NODES=${IOLENS_E2E_NODES:-2}

down() {
	local rc=$?
	trap - EXIT INT TERM
	local t=$(date +%s.%N)
	"$here/cluster.sh" down || rc=1
	echo "e2e: cluster down in $(elapsed "$t")s" >&2
	if ! "$here/cluster.sh" check; then
		echo "e2e: FAIL: the cluster left something on the host" >&2
		rc=1
	fi
	echo "e2e: total $(elapsed "$t0")s, exit $rc" >&2
	# What failed, again: the cluster's way down scrolled it away.
	if [ "$rc" != 0 ] && [ -s "$testlog" ]; then
		"$root/scripts/test-failures" "$testlog" | sed 's/^/e2e: /' >&2 || true
	fi
	rm -f "$testlog"
	exit $rc
}
# The tests' output, for the summary of what failed at the end.
testlog=$(mktemp "${TMPDIR:-/tmp}/iolens-e2e-test.XXXXXX")
trap down EXIT
trap 'exit 130' INT TERM

state=${IOLENS_E2E_STATE:-/var/tmp/iolens-e2e}
if [ -e "$state/up" ]; then
	# We hold the lock, so no other run owns it: a run that was killed.
	echo "e2e: removing the cluster a killed run left in $state" >&2
	"$here/cluster.sh" down
fi
t=$(date +%s.%N)
kubeconfig=$("$here/cluster.sh" up 8<&- 9<&- | tail -1)
echo "e2e: cluster up in $(elapsed "$t")s (including the build or cache lookup of the Kubernetes binaries)" >&2
bin=$("$here/build.sh" 2>/dev/null | tail -1)

t=$(date +%s.%N)
cd "$root"
# The tee ignores INT and TERM: a signal must not cut the tests' output
# (and end them with a broken pipe) while they clean up.
IOLENS_E2E_KUBECONFIG=$kubeconfig IOLENS_E2E_IOLENS=$iolens IOLENS_E2E_KUBECTL=$bin/kubectl \
	IOLENS_E2E_STATE=$state IOLENS_E2E_USER_KUBECONFIG=$state/host-user.kubeconfig IOLENS_E2E_CLUSTER=$here/cluster.sh \
	go test -count=1 -v -timeout 30m -run "${IOLENS_E2E_RUN:-.}" ./test/e2e/ 8<&- 9<&- 2>&1 | (trap '' INT TERM; exec tee "$testlog") 8<&- 9<&-
echo "e2e: tests took $(elapsed "$t")s" >&2
