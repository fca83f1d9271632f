package k8s

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func names(ts []Target) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return strings.Join(out, " ")
}

// TestRequestCheck: every mistake is a *RequestError found before any API
// call, and a good request sets the run's modes and selector.
func TestRequestCheck(t *testing.T) {
	ok := Request{Sizes: []string{"10Gi"}, VolumeMode: "Filesystem", VolumesPerNode: 1}
	for _, c := range []struct {
		name string
		edit func(*Request)
		want string
	}{
		{"size", func(q *Request) { q.Sizes = []string{"ten"} }, "--pvc-size"},
		{"no size", func(q *Request) { q.Sizes, q.SizesGiven = []string{" "}, true }, "no size"},
		{"class name", func(q *Request) { q.Classes = []string{"Bad_Class"} }, "Bad_Class"},
		{"volume", func(q *Request) { q.Volumes = []string{"fast"} }, "--target"},
		{"volume mode", func(q *Request) { q.VolumeMode = "Raw" }, "Raw"},
		{"access mode", func(q *Request) { q.AccessMode = "RWO" }, "RWO"},
		{"per node", func(q *Request) { q.VolumesPerNode = 0 }, "at least 1"},
		{"nodes", func(q *Request) { q.Nodes, q.AllNodes = []string{"a"}, true }, "exclusive"},
		{"selector", func(q *Request) { q.NodeSelector = "=x" }, ""},
	} {
		q := ok
		c.edit(&q)
		var cfg Config
		err := q.Check(&cfg)
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a RequestError with %q", c.name, err, c.want)
		}
	}
	q := ok
	q.AccessMode, q.NodeSelector, q.Parallel = "ReadWriteOncePod", "pool=fast", true
	var cfg Config
	if err := q.Check(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.VolumeMode != corev1.PersistentVolumeFilesystem || cfg.AccessMode != corev1.ReadWriteOncePod ||
		cfg.NodeSelector["pool"] != "fast" || !cfg.Parallel || cfg.Disk == nil {
		t.Errorf("config not set: %+v", cfg)
	}
}

// TestRequestTargets: the default class fills an empty class list (none
// is the user's to fix), AllNodes names the nodes and drops the
// selector, and volumes alone make no product with the default size.
func TestRequestTargets(t *testing.T) {
	ready := corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	def := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "std", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}}
	cs := fake.NewSimpleClientset(def,
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"pool": "fast"}}, Status: ready},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2", Labels: map[string]string{"pool": "slow"}}, Status: ready})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    Request
		want string
	}{
		{"default class", Request{Sizes: []string{"10Gi"}}, "std/10Gi"},
		{"all nodes", Request{Classes: []string{"fast"}, Sizes: []string{"1Ti"}, AllNodes: true, NodeSelector: "pool=fast"}, "fast/1Ti@n1"},
		{"volumes only", Request{Sizes: []string{"10Gi"}, Volumes: []string{"raw:1Ti:Block"}}, "raw/1Ti/Block"},
		{"volumes and sizes", Request{Sizes: []string{"10Gi"}, SizesGiven: true, Volumes: []string{"raw:1Ti"}}, "std/10Gi raw/1Ti"},
	} {
		q := c.q
		q.VolumeMode, q.VolumesPerNode = "Filesystem", 1
		var cfg Config
		if err := q.Check(&cfg); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ts, err := q.Targets(ctx, cs, &cfg)
		if err != nil || names(ts) != c.want {
			t.Errorf("%s: %q %v, want %q", c.name, names(ts), err, c.want)
		}
		if q.AllNodes && cfg.NodeSelector != nil {
			t.Errorf("%s: the selector stays beside named nodes", c.name)
		}
	}
	q := Request{Sizes: []string{"10Gi"}, VolumeMode: "Filesystem", VolumesPerNode: 1}
	var cfg Config
	_ = q.Check(&cfg)
	_, err := q.Targets(ctx, fake.NewSimpleClientset(), &cfg)
	var re *RequestError
	if !errors.Is(err, ErrNoDefaultClass) || !errors.As(err, &re) {
		t.Errorf("no default class: %v, want a RequestError", err)
	}
}
