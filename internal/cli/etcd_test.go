package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// etcdPage is an etcd-like /metrics page whose WAL histogram has fast
// fsyncs (at most 1 ms) and slow ones (16-32 ms) on etcd's buckets.
func etcdPage(fast, slow int) string {
	var b strings.Builder
	for _, name := range []string{"etcd_disk_wal_fsync_duration_seconds", "etcd_disk_backend_commit_duration_seconds"} {
		fmt.Fprintf(&b, "# TYPE %s histogram\n", name)
		bound := 0.001
		for i := range 14 {
			c := fast
			if i >= 5 {
				c += slow
			}
			fmt.Fprintf(&b, "%s_bucket{le=\"%g\"} %d\n", name, bound, c)
			bound *= 2
		}
		fmt.Fprintf(&b, "%s_bucket{le=\"+Inf\"} %d\n%s_sum 1\n%s_count %d\n", name, fast+slow, name, name, fast+slow)
	}
	return b.String()
}

func etcdServer(t *testing.T, page string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, page) }))
	t.Cleanup(s.Close)
	return s.URL
}

func TestEtcdCommand(t *testing.T) {
	pass := etcdServer(t, etcdPage(1000, 0))
	fail := etcdServer(t, etcdPage(900, 100))
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := "http://" + l.Addr().String()
	l.Close()
	tests := []struct {
		args      []string
		code      int
		out, errs string
	}{
		{[]string{"etcd", pass}, 0, "verdict: PASS", ""},
		{[]string{"etcd", fail}, 1, "verdict: FAIL", "etcd verdict fail (--fail-on fail)"},
		{[]string{"etcd", fail, "--fail-on", "none"}, 0, "verdict: FAIL", ""},
		{[]string{"etcd", pass, "--fail-on", "info"}, 1, "verdict: PASS", "etcd verdict pass"},
		{[]string{"etcd", pass, gone}, 1, "connection refused", "1 of 2 etcd members could not be read"},
		{[]string{"etcd", pass, "--fail-on", "sometimes"}, 2, "", "valid values: none, info, warn, fail"},
		{[]string{"etcd", pass, "-o", "yaml"}, 2, "", "valid formats: text, json"},
		{[]string{"etcd", pass, "--interval", "500ms"}, 2, "", "1s or more"},
		{[]string{"etcd", pass, "--interval", "-3s"}, 2, "", "negative"},
		{[]string{"etcd", "ftp://10.0.0.1"}, 2, "", "scheme"},
		{[]string{"etcd", pass, "--cert", "/x.crt"}, 2, "", "--cert and --key go together"},
		{[]string{"etcd", pass, "--insecure-skip-verify", "--cacert", "/ca.crt"}, 2, "", "drop --insecure-skip-verify"},
		{[]string{"etcd", pass, "--cacert", "/nonexistent/ca.crt"}, 1, "", "--cacert"},
		{[]string{"etcd"}, 2, "", "no etcd endpoint"},
	}
	for _, tc := range tests {
		out, errs, code := execute(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.errs) {
			t.Errorf("%v: exit %d, want %d\nstdout: %s\nstderr: %s\nwant %q / %q", tc.args, code, tc.code, out, errs, tc.out, tc.errs)
		}
	}
}

func TestEtcdCommandJSON(t *testing.T) {
	pass := etcdServer(t, etcdPage(1000, 0))
	fail := etcdServer(t, etcdPage(900, 100))
	out, _, code := execute(t, "etcd", pass, fail, "-o", "json", "--interval", "1s")
	if code != 0 { // no data is not a failure, unless --fail-on warn
		t.Errorf("exit %d", code)
	}
	var rep struct {
		Schema, Verdict string
		IntervalS       float64 `json:"interval_s"`
		Members         []struct {
			Endpoint, Verdict, Over string
			WALFsync                struct {
				Verdict string
				Count   float64
			} `json:"wal_fsync"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The pages do not change: nothing happened between the scrapes.
	if rep.Schema != "iolens.etcd/v1" || rep.Verdict != "no-data" || rep.IntervalS != 1 || len(rep.Members) != 2 ||
		rep.Members[1].Over != "interval" || rep.Members[1].WALFsync.Count != 0 {
		t.Errorf("report %+v", rep)
	}
	out, _, _ = execute(t, "etcd", pass, fail, "-o", "json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != "fail" || rep.Members[0].Verdict != "pass" || rep.Members[1].Verdict != "fail" || rep.Members[1].WALFsync.Count != 1000 {
		t.Errorf("report %+v", rep)
	}
}

func TestWatchEtcdFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "--etcd", "http://127.0.0.1:2381", "--etcd-window", "1s"}, "shorter than two intervals"},
		{[]string{"watch", "--etcd", "ftp://127.0.0.1"}, "scheme"},
		{[]string{"watch", "--etcd", "http://127.0.0.1:2381", "--etcd-cert", "/x.crt"}, "--etcd-cert and --etcd-key go together"},
		{[]string{"watch", "--etcd-window", "0"}, "--etcd-window without --etcd"},
		{[]string{"watch", "--etcd-window", "5m", "--duration", "1s"}, "--etcd-window without --etcd"},
		{[]string{"watch", "--etcd-cacert", "/x.crt"}, "--etcd-cacert without --etcd"},
	} {
		_, errs, code := execute(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %s; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
