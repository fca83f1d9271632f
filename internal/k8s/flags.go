package k8s

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

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

// ParseNodeSelector reads --node-selector: k=v[,k=v]; nil for "".
func ParseNodeSelector(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--node-selector %q: want k=v[,k=v]", s)
		}
		m[k] = v
	}
	return m, nil
}

// ParsePullPolicy reads --pull-policy.
func ParsePullPolicy(s string) (corev1.PullPolicy, error) {
	switch p := corev1.PullPolicy(s); p {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return p, nil
	}
	return "", fmt.Errorf("--pull-policy %q: want IfNotPresent, Always or Never", s)
}

// ParseVolumeMode reads --volume-mode.
func ParseVolumeMode(s string) (corev1.PersistentVolumeMode, error) {
	switch m := corev1.PersistentVolumeMode(s); m {
	case corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeBlock:
		return m, nil
	}
	return "", fmt.Errorf("--volume-mode %q: want Filesystem or Block", s)
}

// ParseAccessMode reads --access-mode.
func ParseAccessMode(s string) (corev1.PersistentVolumeAccessMode, error) {
	switch m := corev1.PersistentVolumeAccessMode(s); m {
	case corev1.ReadWriteOnce, corev1.ReadWriteOncePod, corev1.ReadWriteMany, corev1.ReadOnlyMany:
		return m, nil
	}
	return "", fmt.Errorf("--access-mode %q: want ReadWriteOnce, ReadWriteOncePod, ReadWriteMany or ReadOnlyMany", s)
}

// CheckImage refuses an image that is not pinned: no tag or digest, or
// latest. pinned is an example of one that is.
func CheckImage(image, pinned string) error {
	if strings.HasSuffix(image, ":latest") || !strings.Contains(image[strings.LastIndex(image, "/")+1:], ":") && !strings.Contains(image, "@") {
		return fmt.Errorf("--image %q: pin a tag or digest (never latest), such as %s", image, pinned)
	}
	return nil
}
