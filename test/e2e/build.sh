#!/usr/bin/env bash
# Builds (or finds in the cache) the binaries the e2e cluster runs:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
# kube-proxy and kubectl from the pinned k8s.io modules
# (test/e2e/k8sbin/go.mod), and local-path-provisioner. Only what the cache
# lacks is built. Prints the cache directory on the last line.
#
# The cache key is the Kubernetes version, the provisioner version and the Go
# version, so a toolchain bump rebuilds instead of reusing stale binaries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=v1.34.4
LPP_VERSION=v0.0.30
GO=${GO:-go}
gover=$($GO env GOVERSION)
cache=${IOLENS_E2E_CACHE:-$HOME/.cache/iolens-e2e-k8s-$K8S_VERSION-lpp-$LPP_VERSION-$gover}
k8s_bins="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"

missing=""
for b in $k8s_bins; do [ -x "$cache/$b" ] || missing="$missing $b"; done
need_lpp=0
[ -x "$cache/local-path-provisioner" ] || need_lpp=1
if [ -z "$missing" ] && [ $need_lpp = 0 ]; then
	echo "build: cache hit" >&2
	echo "$cache"
	exit 0
fi

mkdir -p "$cache"
tmp=""
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ver=k8s.io/component-base/version
ldflags="-s -w -X $ver.gitVersion=$K8S_VERSION -X $ver.gitMajor=1 -X $ver.gitMinor=$minor -X $ver.gitTreeState=clean"
if [ -n "$missing" ]; then
	start=$(date +%s)
	tmp=$(mktemp -d "$cache.tmp.XXXXXX")
	pkgs=""
	for b in $missing; do pkgs="$pkgs k8s.io/kubernetes/cmd/$b"; done
	(
		cd "$here/k8sbin"
		# nice: a cold build takes about 11 CPU-minutes and shares the machine.
		CGO_ENABLED=0 nice -n 10 $GO build -trimpath -ldflags "$ldflags" -o "$tmp/" $pkgs
	)
	# Each binary lands whole or not at all.
	for b in $missing; do mv "$tmp/$b" "$cache/$b"; done
	rmdir "$tmp"
	tmp=""
	echo "build: kubernetes $K8S_VERSION:$missing in $(( $(date +%s) - start ))s" >&2
fi
if [ $need_lpp = 1 ]; then
	start=$(date +%s)
	tmp=$(mktemp -d "$cache.tmp.XXXXXX")
	# The provisioner's own go.mod has no replace directives, so go install works.
	GOBIN="$tmp" CGO_ENABLED=0 nice -n 10 $GO install -trimpath -ldflags "-s -w" \
		github.com/rancher/local-path-provisioner@$LPP_VERSION
	mv "$tmp/local-path-provisioner" "$cache/"
	rmdir "$tmp"
	tmp=""
	echo "build: local-path-provisioner $LPP_VERSION in $(( $(date +%s) - start ))s" >&2
fi
echo "$cache"
