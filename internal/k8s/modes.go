package k8s

import (
	"fmt"
	"strings"

	"github.com/iolens/iolens/internal/hint"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseNodeSelector reads --node-selector: k=v[,k=v]; nil for "". Each
// key and value must be one the API accepts as a label (a value with
// "=" in it, a key given twice or a key with a space is refused here,
// not by the API server).
func ParseNodeSelector(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("--node-selector %q: want k=v[,k=v]", s)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("--node-selector %q: the key %q is not a label key: %s", s, k, errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("--node-selector %q: the value %q is not a label value: %s", s, v, errs[0])
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("--node-selector %q: the key %q is given twice", s, k)
		}
		m[k] = v
	}
	return m, nil
}

// CheckNodeSelector refuses a --node-selector ParseNodeSelector would,
// saying what one looks like.
func CheckNodeSelector(s string) error {
	_, err := ParseNodeSelector(s)
	return hint.Wrap(err, "labels as k=v[,k=v], each a valid label key and value, e.g. --node-selector disktype=ssd")
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
