#!/usr/bin/env bash
# check.sh DIST: checks a release directory with standard tools only, apart
# from the Go code that wrote it (make release-check runs it):
#   - sha256sum -c SHA256SUMS passes, and lists every archive;
#   - each platform of the krew manifest (iolens.yaml) names an archive in
#     DIST whose sha256sum is the manifest's sha256, and that archive
#     holds the plugin's bin and LICENSE;
#   - the archive for this machine's architecture unpacks, and its iolens
#     and kubectl-iolens report the manifest's version.
set -euo pipefail
dist=${1:?usage: check.sh DIST}
cd "$dist"
fail=0
bad() { echo "FAIL  $*" >&2; fail=1; }
ok() { echo "ok    $*"; }

if sha256sum --quiet -c SHA256SUMS; then ok "sha256sum -c SHA256SUMS"; else bad "sha256sum -c SHA256SUMS"; fi
for f in *.tar.gz; do
	grep -q "  $f\$" SHA256SUMS || bad "$f is not in SHA256SUMS"
done

version=$(awk '$1 == "version:" { print $2; exit }' iolens.yaml)
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+ ]] || bad "krew manifest version '$version'"
# One "uri:" then "sha256:" per platform, in that order.
n=0
while read -r uri sum; do
	n=$((n + 1))
	f=${uri##*/}
	if [[ ! -f $f ]]; then bad "krew: $f (from $uri) is not in $dist"; continue; fi
	got=$(sha256sum "$f" | cut -d' ' -f1)
	if [[ $got == "$sum" ]]; then ok "krew: $f sha256 $sum"; else bad "krew: $f sha256 is $got, the manifest says $sum"; fi
	listing=$(tar -tzf "$f")
	grep -qx kubectl-iolens <<<"$listing" || bad "krew: $f has no kubectl-iolens"
	grep -qx LICENSE <<<"$listing" || bad "krew: $f has no LICENSE"
done < <(awk '$1 == "uri:" { u = $2 } $1 == "sha256:" { print u, $2 }' iolens.yaml)
((n >= 2)) || bad "krew manifest has $n platforms"

case $(uname -m) in
x86_64) arch=amd64 ;;
aarch64) arch=arm64 ;;
*) arch= ;;
esac
tgz=iolens_${version}_linux_$arch.tar.gz
if [[ -n $arch && -f $tgz ]]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tar -xzf "$tgz" -C "$tmp"
	out=$("$tmp/iolens" version -o json)
	if grep -q "\"version\": \"$version\"" <<<"$out" && grep -q '"commit": "[0-9a-f]' <<<"$out"; then
		ok "$tgz: iolens version -o json says $version"
	else
		bad "$tgz: iolens version -o json printed: $out"
	fi
	if [[ $("$tmp/kubectl-iolens" --version) == *" $version" ]]; then ok "$tgz: kubectl-iolens --version"; else bad "$tgz: kubectl-iolens --version"; fi
else
	echo "skip  no archive for this machine's architecture ($(uname -m))"
fi
exit $fail
