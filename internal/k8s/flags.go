package k8s

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/iolens/iolens/internal/hint"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The checks of what a user gives a Kubernetes run on the command line,
// made before the first call to the API: each error names its flag.

// ParseTolerations reads --tolerate values: KEY[=VALUE][:EFFECT], a
// taint the pods tolerate.
func ParseTolerations(in []string) ([]corev1.Toleration, error) {
	var out []corev1.Toleration
	for _, s := range in {
		t := corev1.Toleration{Operator: corev1.TolerationOpExists}
		if kv, eff, ok := strings.Cut(s, ":"); ok {
			s = kv
			switch corev1.TaintEffect(eff) {
			case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
				t.Effect = corev1.TaintEffect(eff)
			default:
				return nil, fmt.Errorf("--tolerate %q: effect must be NoSchedule, PreferNoSchedule or NoExecute", s+":"+eff)
			}
		}
		k, v, hasV := strings.Cut(s, "=")
		if k == "" {
			return nil, fmt.Errorf("--tolerate %q: no key", s)
		}
		t.Key = k
		if hasV {
			t.Operator, t.Value = corev1.TolerationOpEqual, v
		}
		out = append(out, t)
	}
	return out, nil
}

// ParsePullPolicy reads --pull-policy.
func ParsePullPolicy(s string) (corev1.PullPolicy, error) {
	switch p := corev1.PullPolicy(s); p {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return p, nil
	}
	return "", fmt.Errorf("--pull-policy %q: want IfNotPresent, Always or Never", s)
}

// CheckImage refuses an image that is not a valid reference or is not
// pinned: no tag or digest, the tag latest, or a digest that is not
// sha256 and 64 hex digits. pinned is an example of one that is.
func CheckImage(image, pinned string) error {
	ref, err := name.ParseReference(image)
	if err != nil {
		return fmt.Errorf("--image %q: not an image reference (%v); give one such as %s", image, err, pinned)
	}
	_, digest := ref.(name.Digest)
	tag, _ := ref.(name.Tag)
	if !digest && (tag.TagStr() == "latest" || !strings.Contains(image[strings.LastIndex(image, "/")+1:], ":")) {
		return fmt.Errorf("--image %q: pin a tag or digest (never latest), such as %s", image, pinned)
	}
	return nil
}

// CheckRunID refuses a run id that the objects of a run could not carry:
// it is the value of their run-id label, and names node-check's
// directory, so it is what a label value may be: up to 63 letters,
// digits, '-', '_' and '.', starting and ending with a letter or digit.
func CheckRunID(flag, id string) error {
	errs := validation.IsValidLabelValue(id)
	if id == "" {
		errs = []string{"empty"}
	}
	if len(errs) == 0 {
		return nil
	}
	return &hint.Error{Err: fmt.Errorf("%s %q is not a run id: %s", flag, id, errs[0]),
		Advice: "run ids look like 20260101-120000-abc123 ('iolens k8s run' prints them; leave --run-id out to get one)"}
}

// CheckServiceAccount refuses a service account name the API would.
func CheckServiceAccount(sa string) error {
	if errs := validation.IsDNS1123Subdomain(sa); len(errs) > 0 {
		return &hint.Error{Err: fmt.Errorf("--agent-service-account %q is not a valid name: %s", sa, errs[0]),
			Advice: "give the service account of deploy/rbac.yaml, " + DefaultAgentServiceAccount}
	}
	return nil
}

// Check refuses timeouts no phase could meet: each must be positive (the
// run's may be 0, which derives it from the suite).
func (t Timeouts) Check() error {
	for _, d := range []struct {
		flag string
		v    time.Duration
		zero bool
	}{{"--bind-timeout", t.Bind, false}, {"--schedule-timeout", t.Schedule, false}, {"--start-timeout", t.Start, false},
		{"--run-timeout", t.Run, true}, {"--cleanup-timeout", t.Cleanup, false}} {
		if d.v < 0 || d.v == 0 && !d.zero {
			return &hint.Error{Err: fmt.Errorf("%s %s: must be positive", d.flag, d.v), Advice: "give a duration such as 5m"}
		}
	}
	return nil
}
