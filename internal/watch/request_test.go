package watch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
)

// The mistakes a watch is refused for before it starts: each a usage
// error with what to give instead.
func TestRequestMistakes(t *testing.T) {
	set := func(names ...string) func(string) bool {
		return func(n string) bool { return strings.Contains(strings.Join(names, " "), n) }
	}
	for _, tc := range []struct {
		r    Request
		want string
	}{
		{Request{Interval: 10 * time.Millisecond}, "--interval"},
		{Request{Interval: time.Second, VM: "Standard_D4s_v3"}, "--vm needs --expect"},
		{Request{Interval: time.Second, Expect: "iops=x"}, "--expect"},
		{Request{Interval: time.Second, Expect: "azure:P99"}, "P99"},
		{Request{Interval: time.Second, Etcd: []string{"http://127.0.0.1:2381"}, EtcdWindow: units.Duration(time.Second)}, "--etcd-window"},
		{Request{Interval: time.Second, Etcd: []string{"ftp://x"}, EtcdWindow: units.Duration(time.Minute)}, "--etcd"},
	} {
		tc.r.ProcRoot, tc.r.SysRoot = "testdata/none", "testdata/none"
		_, _, _, err := tc.r.Start(context.Background(), nil)
		var u *hint.UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) || hint.Of(err) == "" {
			t.Errorf("%q: %v, want a usage error with a hint", tc.want, err)
		}
	}
	r := Request{Set: set("etcd-window")}
	if err := r.CheckEtcd(); err == nil || !strings.Contains(err.Error(), "--etcd-window without --etcd") {
		t.Errorf("--etcd-window alone: %v", err)
	}
	r.Etcd = []string{"http://127.0.0.1:2381"}
	if err := r.CheckEtcd(); err != nil {
		t.Errorf("--etcd-window with --etcd: %v", err)
	}
}
