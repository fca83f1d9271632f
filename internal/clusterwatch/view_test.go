package clusterwatch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/watch"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestViewCheck(t *testing.T) {
	for _, c := range []struct {
		v    View
		want string
	}{
		{View{Namespace: "iolens", Timeout: time.Second, Interval: time.Second}, ""},
		{View{Namespace: "iolens", Timeout: time.Second}, "--refresh 0s"},
		{View{Namespace: "iolens", Interval: time.Second, Timeout: -time.Second}, "--timeout -1s"},
		{View{Namespace: "Bad NS", Timeout: time.Second, Interval: time.Second}, "namespace"},
	} {
		err := c.v.Check()
		var re *k8s.RequestError
		if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.v, err, c.want)
		}
	}
}

func TestViewOnce(t *testing.T) {
	v := View{Namespace: "iolens", Selector: "app=w", Once: true, Timeout: 50 * time.Millisecond, Interval: 10 * time.Millisecond}
	draws := 0
	draw := func(_ *watch.ClusterState, again bool) {
		draws++
		if again {
			t.Error("a drawing with --once replaces another")
		}
	}
	err := v.Run(context.Background(), fake.NewSimpleClientset(), draw)
	if err == nil || !strings.Contains(hint.Of(err), "deploy it") || draws != 0 {
		t.Errorf("no pods: %v, %d drawings", err, draws)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "iolens", Labels: map[string]string{"app": "w"}},
		Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	err = v.Run(context.Background(), fake.NewSimpleClientset(pod), draw)
	if err == nil || !strings.Contains(err.Error(), "only 0 of 1 watch pods reported") || draws != 1 {
		t.Errorf("a pod that never reports: %v, %d drawings", err, draws)
	}
}
