// Package release packages iolens for a release and checks what it
// packaged: reproducible archives of the static binaries, SHA256SUMS, an
// SPDX SBOM of the Go modules and of the agent image's Debian packages,
// and the krew manifest with the archives' real hashes. Check verifies a
// dist directory as a user and a registry would see it.
package release
