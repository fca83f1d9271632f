// Package image builds the agent's container image as a tarball without a
// container daemon: a single layer holding iolens, fio with the shared
// libraries it loads, and busybox for the few shell tools a provisioner's
// helper pod expects. The tarball loads with 'docker load' or
// 'ctr images import'.
package image
