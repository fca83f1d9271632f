package clusterwatch

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	corev1 "k8s.io/api/core/v1"
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

// TestInClusterNodeExpectOutsideAPod: no node name, or no pod around,
// is the user's mistake, with what to do.
func TestInClusterNodeExpectOutsideAPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for node, want := range map[string]string{"": "node's name", "n1": "runs in a pod"} {
		_, err := InClusterNodeExpect(node, 100)
		var re *k8s.RequestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), want) || hint.Of(err) == "" {
			t.Errorf("node %q: %v, want a RequestError with a hint", node, err)
		}
	}
}
