package k8s

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// Cleanup --all touches only objects that carry a run id as well as the
// ownership label, in any namespace it is given, Jobs and pods before
// claims, and ConfigMaps last.
func TestCleanupAllOnlyObjectsWithARunID(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	ctx := context.Background()
	cs := fc.cs
	ours := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{LabelManagedBy: ManagedByValue, LabelRunID: "r9"}}
	}
	// Objects that say they are managed by iolens but carry no run id: a
	// user's, or another tool's that shares the label value.
	claimed := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{LabelManagedBy: ManagedByValue}}
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: ours("iolens-t1-1")}, metav1.CreateOptions{}))
	must(cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: ours("iolens-t1-1-pod")}, metav1.CreateOptions{}))
	must(cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: ours("iolens-t1-2")}, metav1.CreateOptions{}))
	must(cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: ours("iolens-gate-1")}, metav1.CreateOptions{}))
	must(cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: claimed("nightly-backup")}, metav1.CreateOptions{}))
	must(cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: claimed("web-0")}, metav1.CreateOptions{}))
	must(cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: claimed("db-data")}, metav1.CreateOptions{}))
	must(cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: claimed("app-config")}, metav1.CreateOptions{}))
	fc.mu.Lock()
	fc.writes = nil
	fc.mu.Unlock()

	l, err := FindLeftovers(ctx, cs, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if l.Objects() != 4 || len(l.Namespaces()) != 1 || l.Namespaces()[0] != ns {
		t.Fatalf("leftovers %+v", l)
	}
	cctx, stop := context.WithCancel(ctx)
	go fc.control(cctx)
	defer stop()
	left, err := Cleanup(ctx, &Client{CS: cs, Poll: time.Millisecond}, "", "", nil)
	if err != nil || left.Objects() != 0 {
		t.Fatalf("cleanup: %v, left %+v", err, left)
	}
	want := "delete jobs iolens-t1-1\ndelete pods iolens-t1-1-pod\ndelete persistentvolumeclaims iolens-t1-2\ndelete configmaps iolens-gate-1"
	if got := strings.Join(writes(fc), "\n"); got != want {
		t.Errorf("deleted:\n%s\nwant:\n%s", got, want)
	}
	for _, get := range []func() error{
		func() error {
			_, err := cs.BatchV1().Jobs(ns).Get(ctx, "nightly-backup", metav1.GetOptions{})
			return err
		},
		func() error { _, err := cs.CoreV1().Pods(ns).Get(ctx, "web-0", metav1.GetOptions{}); return err },
		func() error {
			_, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "db-data", metav1.GetOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
			return err
		},
	} {
		if err := get(); err != nil {
			t.Errorf("an object without a run id was deleted: %v", err)
		}
	}
}

// A failing delete does not stop the rest, and is reported.
func TestCleanupReportsEveryFailure(t *testing.T) {
	fc := newFakeCluster(t, "fast")
	ctx := context.Background()
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{LabelManagedBy: ManagedByValue, LabelRunID: "r9"}}
	}
	_, _ = fc.cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: meta("iolens-t1-1")}, metav1.CreateOptions{})
	_, _ = fc.cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: meta("iolens-t1-2")}, metav1.CreateOptions{})
	_, _ = fc.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("iolens-gate-1")}, metav1.CreateOptions{})
	fc.cs.PrependReactor("delete", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is on fire")
	})
	cctx, stop := context.WithCancel(ctx)
	go fc.control(cctx)
	defer stop()
	left, err := Cleanup(ctx, &Client{CS: fc.cs, Poll: time.Millisecond}, ns, "r9", nil)
	if err == nil || !strings.Contains(err.Error(), "etcd is on fire") {
		t.Fatalf("error %v", err)
	}
	if len(left.Jobs) != 1 || len(left.PVCs) != 0 || len(left.ConfigMaps) != 0 {
		t.Errorf("left %+v: the claim and the ConfigMap should be gone", left)
	}
}

func TestPodSecurityNote(t *testing.T) {
	for _, c := range []struct {
		level     string
		block     bool
		hostPath  string
		wantEmpty bool
		want      string
	}{
		{level: "restricted", wantEmpty: true},
		{level: "", want: "label it pod-security.kubernetes.io/enforce=restricted"},
		{level: "privileged", want: "enforces privileged Pod Security level"},
		{level: "privileged", block: true, wantEmpty: true},
		{level: "restricted", block: true, want: "use a namespace labelled pod-security.kubernetes.io/enforce=privileged"},
		{level: "baseline", hostPath: "/var/lib/etcd", want: "refuses the root pods"},
	} {
		fc := newFakeCluster(t, "fast")
		_, _ = fc.cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{LabelEnforce: c.level}}}, metav1.CreateOptions{})
		h := newHarness(t, fc, func(cfg *Config) {
			cfg.HostPath = c.hostPath
			if c.block {
				cfg.VolumeMode = corev1.PersistentVolumeBlock
			}
		})
		got := h.runner.podSecurityNote(context.Background(), nil)
		if c.wantEmpty != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("level %q block %v host %q: %q, want %q", c.level, c.block, c.hostPath, got, c.want)
		}
	}
	// Without the right to read namespaces, nothing is said.
	fc := newFakeCluster(t, "fast")
	if got := newHarness(t, fc, nil).runner.podSecurityNote(context.Background(), nil); got != "" {
		t.Errorf("no namespace: %q", got)
	}
}
