package k8s

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestAPIPodNamer: a lookup never waits for the API. The first lookup of
// an unknown UID misses and lists in the background; later ones name the
// pod and its container.
func TestAPIPodNamer(t *testing.T) {
	cs := fake.NewSimpleClientset(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "postgres-0", Namespace: "db", UID: "0b4a7c1e-1111-2222-3333-444455556666"},
		Spec:       corev1.PodSpec{NodeName: "node-a"},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "postgres", ContainerID: "containerd://abc123"},
		}},
	})
	release := make(chan struct{})
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		<-release // an API that answers only when the test says so
		return false, nil, nil
	})
	a := NewAPIPodNamer(cs, "node-a")
	start := time.Now()
	if _, _, _, ok := a.Pod("0b4a7c1e-1111-2222-3333-444455556666", "abc123"); ok {
		t.Fatal("named before any list")
	}
	if _, _, _, ok := a.Pod("0b4a7c1e-1111-2222-3333-444455556666", "abc123"); ok {
		t.Fatal("named before the list answered")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("lookups waited %s for the API", d)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		ns, name, ctr, ok := a.Pod("0b4a7c1e-1111-2222-3333-444455556666", "abc123")
		if ok {
			if ns != "db" || name != "postgres-0" || ctr != "postgres" {
				t.Fatalf("got %s/%s container %q", ns, name, ctr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background list never named the pod")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(cs.Actions()); n != 1 {
		t.Errorf("%d API calls, want 1 list", n)
	}
}

func TestSchedulableNodes(t *testing.T) {
	ready := corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
	notReady := corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}
	node := func(name string, labels map[string]string, st corev1.NodeStatus, cordoned bool, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Unschedulable: cordoned, Taints: taints}, Status: st}
	}
	storage := corev1.Taint{Key: "dedicated", Value: "storage", Effect: corev1.TaintEffectNoSchedule}
	cs := fake.NewSimpleClientset(
		node("b", map[string]string{"pool": "fast"}, ready, false),
		node("a", map[string]string{"pool": "fast"}, ready, false),
		node("down", map[string]string{"pool": "fast"}, notReady, false),
		node("cordoned", map[string]string{"pool": "fast"}, ready, true),
		node("tainted", map[string]string{"pool": "fast"}, ready, false, storage),
		node("soft", map[string]string{"pool": "slow"}, ready, false, corev1.Taint{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}),
	)
	tol := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "storage", Effect: corev1.TaintEffectNoSchedule}}
	for _, c := range []struct {
		sel  map[string]string
		tol  []corev1.Toleration
		want string
	}{
		{nil, nil, "a b soft"},
		{nil, tol, "a b soft tainted"},
		{map[string]string{"pool": "fast"}, tol, "a b tainted"},
		{map[string]string{"pool": "none"}, nil, ""},
	} {
		got, err := SchedulableNodes(context.Background(), cs, c.sel, c.tol)
		if c.want == "" {
			var he *hint.Error
			if !errors.Is(err, ErrNoNodes) || !errors.As(err, &he) || !strings.Contains(he.Hint(), "--tolerate") {
				t.Errorf("%v: %v", c.sel, err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("selector %v tolerations %d: %v %v, want %s", c.sel, len(c.tol), got, err, c.want)
		}
	}
}

func TestDefaultClass(t *testing.T) {
	cs := fake.NewSimpleClientset(&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "slow"}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}})
	if got, err := DefaultClass(context.Background(), cs); err != nil || got != "fast" {
		t.Errorf("%q %v", got, err)
	}
	cs = fake.NewSimpleClientset(&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "slow"}})
	if _, err := DefaultClass(context.Background(), cs); !errors.Is(err, ErrNoDefaultClass) {
		t.Errorf("no default: %v", err)
	}
}
