package release

import (
	"fmt"
	"regexp"

	"github.com/iolens/iolens/internal/image"
)

// watchManifest is the released watch DaemonSet's name.
const watchManifest = "watch-daemonset.yaml"

// imageLine is a manifest line naming the agent image, with any tag or
// digest.
var imageLine = regexp.MustCompile(`(?m)^(\s*(?:-\s+)?image:\s*)` + regexp.QuoteMeta(image.Repository) + `(?::[\w][\w.-]*)?(?:@sha256:[0-9a-f]{64})?[ \t]*$`)

// pinImage points every agent image of a Kubernetes manifest (the watch
// DaemonSet) at ref: the release's tag, with the image index's digest when
// it is known, so that what is applied is what was released. A manifest
// without the agent image is an error: it would ship unpinned.
func pinImage(manifest []byte, ref string) ([]byte, error) {
	if !imageLine.Match(manifest) {
		return nil, fmt.Errorf("no image: %s line to pin", image.Repository)
	}
	return imageLine.ReplaceAll(manifest, []byte("${1}"+ref)), nil
}

// pinnedRef is the agent image of version v as a manifest should name it:
// the tag, and the index digest when the image was built.
func pinnedRef(v, digest string) string {
	if digest == "" {
		return image.Reference(v)
	}
	return image.Reference(v) + "@" + digest
}
