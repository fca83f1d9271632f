package etcdmetrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
)

// The mistakes a request is refused for, before anything is scraped:
// each a usage error with what to give instead.
func TestRequestMistakes(t *testing.T) {
	ok := Request{Endpoints: []string{"http://127.0.0.1:2381"}, Timeout: units.Duration(time.Second), FailOn: "fail"}
	for _, tc := range []struct {
		edit func(*Request)
		want string
	}{
		{func(r *Request) { r.FailOn = "worst" }, "--fail-on"},
		{func(r *Request) { r.Interval = units.Duration(time.Millisecond) }, "--interval"},
		{func(r *Request) { r.Timeout = 0 }, "--timeout"},
		{func(r *Request) { r.Endpoints = []string{"ftp://x"} }, "ftp://x"},
		{func(r *Request) { r.TLS = ClientOptions{InsecureSkipVerify: true, CACert: "ca.crt"} }, "--insecure-skip-verify and --cacert"},
		{func(r *Request) { r.TLS = ClientOptions{Cert: "c.crt"} }, "--cert and --key"},
	} {
		r := ok
		tc.edit(&r)
		_, err := r.Run(context.Background())
		var u *hint.UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) || hint.Of(err) == "" {
			t.Errorf("%q: %v, want a usage error with a hint", tc.want, err)
		}
	}
	if _, err := (ClientOptions{Cert: "c.crt"}).Open("etcd-"); err == nil || !strings.Contains(err.Error(), "--etcd-cert and --etcd-key") {
		t.Errorf("the flags' prefix: %v", err)
	}
}

func TestReportExit(t *testing.T) {
	for _, tc := range []struct {
		rep    Report
		failOn string
		fails  bool
	}{
		{Report{Verdict: VerdictPass, Members: []Member{{Verdict: VerdictPass}}}, "fail", false},
		{Report{Verdict: VerdictFail, Members: []Member{{Verdict: VerdictFail}}}, "fail", true},
		{Report{Verdict: VerdictFail, Members: []Member{{Verdict: VerdictFail}}}, "none", false},
		{Report{Verdict: VerdictError, Members: []Member{{Verdict: VerdictError}}}, "none", true},
	} {
		if err := tc.rep.Exit(tc.failOn); (err != nil) != tc.fails {
			t.Errorf("%s, --fail-on %s: %v", tc.rep.Verdict, tc.failOn, err)
		}
	}
}
