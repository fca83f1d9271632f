package image

import (
	"context"
	"net/http"
)

// AgentSpec is the one definition of the iolens agent image for one
// architecture: iolens (a static binary built for goarch), fio with every
// library it loads and a static busybox, both from the pinned Debian
// packages, and the directories the pods mount. The pod spec sets the user
// (non-root unless Block mode or node-check needs root), so the image keeps
// the default one: a provisioner's helper pod that runs it as root works.
func AgentSpec(goarch, iolens, version string, debs []Deb) Spec {
	return Spec{
		Arch:    goarch,
		Files:   []File{{Src: iolens, Dst: "/usr/local/bin/iolens"}},
		Debs:    debs,
		Install: []string{"/usr/bin/fio"},
		// A static busybox: sh, mkdir, rm for a local-path provisioner's
		// helper pod, a few more for debugging.
		Busybox:    "/usr/bin/busybox",
		Applets:    defaultApplets(),
		Dirs:       []string{"/tmp", "/data", "/host"},
		Entrypoint: []string{"/usr/local/bin/iolens"},
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Passwd:     []string{"root:x:0:0:root:/root:/bin/sh", "iolens:x:65532:65532:iolens:/tmp:/bin/sh"},
		Group:      []string{"root:x:0:", "iolens:x:65532:"},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "iolens agent",
			"org.opencontainers.image.version":  version,
			"org.opencontainers.image.source":   "https://github.com/iolens/iolens",
			"org.opencontainers.image.licenses": "Apache-2.0",
		},
	}
}

// FetchDebs returns the pinned packages for goarch from cache, downloading
// those that are missing from mirror.
func FetchDebs(ctx context.Context, client *http.Client, mirror, cache, goarch string) ([]Deb, error) {
	pins, err := pins(goarch)
	if err != nil {
		return nil, err
	}
	debs := make([]Deb, 0, len(pins))
	for _, p := range pins {
		path, err := fetch(ctx, client, mirror, cache, p)
		if err != nil {
			return nil, err
		}
		debs = append(debs, Deb{Pin: p, Path: path})
	}
	return debs, nil
}

// CachedDebs returns the pinned packages for goarch from cache without
// downloading anything; it fails on the first one missing or damaged.
func CachedDebs(cache, goarch string) ([]Deb, error) {
	pins, err := pins(goarch)
	if err != nil {
		return nil, err
	}
	debs := make([]Deb, 0, len(pins))
	for _, p := range pins {
		path, err := verifyCached(cache, p)
		if err != nil {
			return nil, err
		}
		debs = append(debs, Deb{Pin: p, Path: path})
	}
	return debs, nil
}

// Manifest records what was built, for the release's SBOM and checks.
type Manifest struct {
	Ref         string     `json:"ref"`
	IndexDigest string     `json:"index_digest,omitempty"`
	Images      []Platform `json:"images"`
}

// Platform is one architecture's image.
type Platform struct {
	Arch     string `json:"arch"`
	Digest   string `json:"digest"`
	Packages []Pin  `json:"packages"`
}
