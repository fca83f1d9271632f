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
