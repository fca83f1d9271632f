// Package image builds the agent's container image without a container
// daemon, from a static iolens and Debian packages pinned by version and
// SHA-256 (debs.lock): fio with every shared library its ELF headers ask
// for, and a static busybox for the shell tools a provisioner's helper pod
// expects. The same inputs give the same digests. It writes a
// docker-archive for one architecture ('ctr images import') or an OCI
// image layout with an index of several.
package image
