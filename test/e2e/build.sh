#!/usr/bin/env bash
# Builds (or finds in the cache) the binaries the e2e cluster runs:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kubectl
# from the pinned k8s.io modules (test/e2e/k8sbin/go.mod), and
# local-path-provisioner. Prints the cache directory on the last line.
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
bins="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl local-path-provisioner"

have_all() {
	local b
	for b in $bins; do [ -x "$cache/$b" ] || return 1; done
}

if have_all; then
	echo "build: cache hit" >&2
	echo "$cache"
	exit 0
fi

mkdir -p "$cache.tmp"
start=$(date +%s)
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ver=k8s.io/component-base/version
ldflags="-s -w -X $ver.gitVersion=$K8S_VERSION -X $ver.gitMajor=1 -X $ver.gitMinor=$minor -X $ver.gitTreeState=clean"
(
	cd "$here/k8sbin"
	# nice: the build takes about 11 CPU-minutes and shares the machine.
	CGO_ENABLED=0 nice -n 10 $GO build -trimpath -ldflags "$ldflags" -o "$cache.tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler \
		k8s.io/kubernetes/cmd/kubelet \
		k8s.io/kubernetes/cmd/kubectl
)
echo "build: kubernetes $K8S_VERSION in $(( $(date +%s) - start ))s" >&2
start=$(date +%s)
# The provisioner's own go.mod has no replace directives, so go install works.
GOBIN="$cache.tmp" CGO_ENABLED=0 nice -n 10 $GO install -trimpath -ldflags "-s -w" \
	github.com/rancher/local-path-provisioner@$LPP_VERSION
echo "build: local-path-provisioner $LPP_VERSION in $(( $(date +%s) - start ))s" >&2
rm -rf "$cache"
mv "$cache.tmp" "$cache"
echo "$cache"
