package k8s

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/hint"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

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
