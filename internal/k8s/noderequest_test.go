package k8s

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/hint"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestNodeRequest(t *testing.T) {
	uid := int64(1000)
	var cfg Config
	q := NodeRequest{Node: "n1", Path: "/var/lib/etcd", RunAsUser: &uid}
	if err := q.Check(&cfg); err != nil || cfg.HostPath != "/var/lib/etcd" || cfg.RunAsUser != &uid {
		t.Fatalf("check: %v, config %+v", err, cfg)
	}
	cs := fake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	ts, err := q.Targets(context.Background(), cs, &cfg)
	if err != nil || len(ts) != 1 || ts[0] != (Target{ID: "t1", Node: "n1", Group: "g1"}) {
		t.Errorf("targets %+v, %v", ts, err)
	}
	q.Node = "n2"
	if _, err := q.Targets(context.Background(), cs, &cfg); err == nil || !strings.Contains(err.Error(), "node n2") || !strings.Contains(hint.Of(err), "kubectl get nodes") {
		t.Errorf("a node that is not there: %v (%q)", err, hint.Of(err))
	}
	for _, c := range []struct {
		q    NodeRequest
		want string
	}{
		{NodeRequest{Node: "n1", Path: "/var/lib/etcd", RunAsUser: new(int64)}, ""},
		{NodeRequest{Node: "n1", Path: "/var/lib/etcd", RunAsUser: ptr(int64(-1))}, "--run-as-user -1"},
		{NodeRequest{Node: "n1", Path: "/var/lib/etcd", RunAsUser: ptr(int64(1 << 32))}, "--run-as-user 4294967296"},
		{NodeRequest{Node: "N1/..", Path: "/var/lib/etcd"}, "node name"},
		{NodeRequest{Node: "n1", Path: "/etc"}, "system tree"},
	} {
		err := c.q.Check(&Config{})
		var re *RequestError
		if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.q, err, c.want)
		}
	}
}

func TestSummaryStatus(t *testing.T) {
	partial := errors.New("partial")
	failed := Summary{RunID: "r1", Outcomes: []Outcome{{Err: errors.New("x")}, {}}}
	allFailed := Summary{RunID: "r1", Outcomes: []Outcome{{Err: errors.New("x")}}}
	runErr := &RunError{Total: 2, Errs: []error{errors.New("x")}}
	live, cancelled := context.Background(), func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}()
	if err := failed.Status(live, nil, 3, partial); err != nil {
		t.Errorf("no error: %v", err)
	}
	cnf := &ClassNotFoundError{Name: "fast"}
	if err := failed.Status(live, cnf, 0, partial); err != cnf {
		t.Errorf("class not found: %v", err)
	}
	if err := failed.Status(live, runErr, 3, partial); !errors.Is(err, partial) || !errors.Is(err, ErrRunFailed) || err.Error() != runErr.Error() {
		t.Errorf("some failed: %v", err)
	}
	if err := allFailed.Status(live, runErr, 0, partial); err != runErr {
		t.Errorf("all failed: %v", err)
	}
	if err := failed.Status(cancelled, runErr, 3, partial); err == nil || !strings.Contains(err.Error(), "interrupted: 3 results kept; not everything went well") || !errors.Is(err, ErrRunFailed) {
		t.Errorf("interrupted with failures: %v", err)
	}
	clean := &RunError{Total: 2, Interrupted: context.Canceled}
	if err := failed.Status(cancelled, clean, 3, partial); err == nil || err.Error() != "interrupted: 3 results kept; every object of run r1 was deleted" {
		t.Errorf("interrupted: %v", err)
	}
}
