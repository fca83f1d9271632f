package k8s

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParseTolerations: --tolerate values (one per line here). What
// parses has a key and a known effect and operator.
func FuzzParseTolerations(f *testing.F) {
	for _, s := range []string{"dedicated=storage:NoSchedule", "node-role.kubernetes.io/control-plane:NoSchedule", "k", ":NoSchedule", "k=v:Bogus", "k=v=w", "k:a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseTolerations(strings.Split(s, "\n"))
		if err != nil {
			return
		}
		for _, tol := range ts {
			if tol.Key == "" {
				t.Fatalf("%q: a toleration without a key", s)
			}
			switch tol.Effect {
			case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
			default:
				t.Fatalf("%q: effect %q", s, tol.Effect)
			}
			if tol.Operator == corev1.TolerationOpExists && tol.Value != "" {
				t.Fatalf("%q: Exists with a value", s)
			}
		}
	})
}

// FuzzCheckImage: an image that passes is a reference with a pinned tag
// (never latest) or a digest, and a run id that passes is a label value.
func FuzzCheckImage(f *testing.F) {
	for _, s := range []string{"ghcr.io/iolens/iolens:0.2.0", "iolens", "x:latest", "x@sha256:abc", "x:1@sha256:" + strings.Repeat("a", 64), "UPPER/case:1", "a b:1", "localhost:5000/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckImage(s, "x:1") == nil {
			ref, err := name.ParseReference(s)
			if err != nil {
				t.Fatalf("%q passed but is no reference: %v", s, err)
			}
			if tag, ok := ref.(name.Tag); ok && tag.TagStr() == "latest" {
				t.Fatalf("%q passed with the tag latest", s)
			}
			if _, ok := ref.(name.Digest); !ok && !strings.Contains(s[strings.LastIndex(s, "/")+1:], ":") {
				t.Fatalf("%q passed with no tag", s)
			}
		}
		if CheckRunID("--run-id", s) == nil && len(validation.IsValidLabelValue(s)) > 0 {
			t.Fatalf("run id %q passed but is no label value", s)
		}
	})
}
