#!/usr/bin/env bash
# What the e2e cluster's second node costs: cluster up time, resident
# memory and idle CPU of each node's processes, with IOLENS_E2E_NODES=1 and
# =2 in turn (-reps times each). Root only; uses the image 'make image'
# built.
#
#   benchmarks/k8s/nodecost.sh [REPS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
reps=${1:-2}
ref=$(tar -xOf bin/iolens-image.tar manifest.json | grep -o '"RepoTags":\["[^"]*"' | sed 's/.*\["//; s/"$//')
export IOLENS_E2E_IMAGE=$ref IOLENS_E2E_AGENT_TAR=$root/bin/iolens-image.tar
state=${IOLENS_E2E_STATE:-/var/tmp/iolens-e2e}
exec 9<"$root/test/e2e/run.sh"
flock 9
trap 'test/e2e/cluster.sh down >/dev/null 2>&1; test/e2e/cluster.sh check' EXIT
tick=$(getconf CLK_TCK)
# cpu PID: user+system ticks of a process.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
for r in $(seq "$reps"); do
	for n in 1 2; do
		t0=$(date +%s.%N)
		IOLENS_E2E_NODES=$n test/e2e/cluster.sh up >/dev/null 2>&1
		up=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		sleep 20 # settle: the first minute has the cluster's start-up work
		declare -A c0=()
		for f in "$state"/pids/*; do p=$(cat "$f"); c0[$f]=$(cpu "$p"); done
		sleep 30
		line="nodes=$n rep=$r up=${up}s"
		tot_rss=0 tot_cpu=0 n2_rss=0 n2_cpu=0
		for f in "$state"/pids/*; do
			p=$(cat "$f"); name=$(basename "$f")
			m=$(rss "$p"); c=$(( $(cpu "$p") - ${c0[$f]} ))
			tot_rss=$((tot_rss + m)); tot_cpu=$((tot_cpu + c))
			case $name in *-2) n2_rss=$((n2_rss + m)); n2_cpu=$((n2_cpu + c)) ;; esac
			line="$line $name=$((m / 1024))MiB"
		done
		# Containers and shims are not in the pid files: the pause
		# containers of an idle cluster are none.
		echo "$line"
		awk -v a="$tot_rss" -v b="$tot_cpu" -v c="$n2_rss" -v d="$n2_cpu" -v t="$tick" -v n="$n" 'BEGIN {
			printf "  nodes=%d: RSS %.0f MiB, idle CPU %.1f%% of one core; node 2 processes: RSS %.0f MiB, CPU %.1f%%\n",
				n, a / 1024, b / t / 30 * 100, c / 1024, d / t / 30 * 100 }'
		test/e2e/cluster.sh down >/dev/null 2>&1
		test/e2e/cluster.sh check
	done
done
