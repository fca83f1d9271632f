package k8s

import (
	"strings"
	"testing"
)

func TestParsePullPolicy(t *testing.T) {
	for _, s := range []string{"IfNotPresent", "Always", "Never"} {
		if p, err := ParsePullPolicy(s); err != nil || string(p) != s {
			t.Errorf("ParsePullPolicy(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParsePullPolicy("always"); err == nil || err.Error() != `--pull-policy "always": want IfNotPresent, Always or Never` {
		t.Errorf("ParsePullPolicy(always): %v", err)
	}
}

func TestCheckImage(t *testing.T) {
	for img, ok := range map[string]bool{
		"ghcr.io/iolens/iolens:v0.2.0":                                true,
		"ghcr.io/iolens/iolens@sha256:abc":                            false,
		"ghcr.io/iolens/iolens@sha256:" + strings.Repeat("ab", 32):    true,
		"ghcr.io/iolens/iolens:v1@sha256:" + strings.Repeat("0f", 32): true,
		"ghcr.io/iolens/iolens@md5:" + strings.Repeat("ab", 16):       false,
		"ghcr.io/Iolens/iolens:v1":                                    false,
		"ghcr.io/iolens/iolens:v1 ; rm -rf /":                         false,
		"":                                                            false,
		"registry:5000/iolens/iolens:v1":                              true,
		"ghcr.io/iolens/iolens:latest":                                false,
		"ghcr.io/iolens/iolens":                                       false,
		"registry:5000/iolens/iolens":                                 false,
		"iolens":                                                      false,
		"iolens:1":                                                    true,
	} {
		if err := CheckImage(img, "x:1"); (err == nil) != ok {
			t.Errorf("CheckImage(%q) = %v, want ok=%v", img, err, ok)
		}
	}
}
