package image

import "strings"

// Repository is where the agent image is published; the tag is always
// the iolens version, never latest.
const Repository = "ghcr.io/iolens/iolens"

// Reference is the agent image of iolens version v.
func Reference(v string) string { return Repository + ":" + Tag(v) }

// Tag turns a version into a valid image tag.
func Tag(v string) string {
	v = strings.TrimPrefix(v, "v")
	var b strings.Builder
	for _, c := range v {
		if c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "dev"
	}
	return b.String()
}
