package promhist_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/etcdmetrics/etcdtest"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/promhist/promtest"
)

// realPrometheus skips a test that starts Prometheus itself under
// -short, or where it is not installed.
func realPrometheus(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts Prometheus")
	}
	if why := promtest.Unavailable(); why != "" {
		t.Skip(why)
	}
}

// backfilled starts a real Prometheus on the scenario's history, written
// into its TSDB with promtool as backfilling does.
func backfilled(t *testing.T, om string, o promtest.Options) *promtest.Prometheus {
	t.Helper()
	o.DataDir = filepath.Join(t.TempDir(), "data")
	promtest.Backfill(t, om, o.DataDir)
	return promtest.StartPrometheus(t, o)
}

// TestRealPrometheusScenario: the scenario's history through a real
// Prometheus, whose own lookback and staleness answer the queries: the
// same stall, ceiling and gap as the synthetic answers give, and the
// counter reset unseen.
func TestRealPrometheusScenario(t *testing.T) {
	realPrometheus(t)
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
	om, check := promhist.ScenarioForTest(start)
	p := backfilled(t, om, promtest.Options{})
	c, err := promhist.NewClient(p.URL, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := promhist.Analyze(t.Context(), c, promhist.Options{Selector: promql.Selector{{Name: "instance", Op: "=", Value: "node-1:9100"}},
		From: start, To: start.Add(599 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	check(t, a, time.Second)
}

// TestRealPrometheusMaxSamples: a Prometheus that refuses queries of
// more than 3000 samples: the 600 instants at 1 s of the sum over 8 CPU
// series load 4800, at 2 s 2400. The analysis asks again at the coarser
// step, says so, and still finds what the history holds, to within that
// step.
func TestRealPrometheusMaxSamples(t *testing.T) {
	realPrometheus(t)
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
	om, check := promhist.ScenarioForTest(start)
	p := backfilled(t, om, promtest.Options{MaxSamples: 3000})
	c, err := promhist.NewClient(p.URL, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	a, err := promhist.Analyze(t.Context(), c, promhist.Options{From: start, To: start.Add(599 * time.Second),
		Progress: func(s string) { told = append(told, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if a.StepS != 2 {
		t.Errorf("analysed at step %g s, want 2", a.StepS)
	}
	if len(told) != 1 || !strings.Contains(told[0], "refused") || !strings.Contains(strings.Join(a.Notes, "\n"), "at step 2s") {
		t.Errorf("progress %q, notes %q: want the retry said once, in both", told, a.Notes)
	}
	check(t, a, 2*time.Second)
}

// TestRealPrometheusTLSAndBasicAuth: a Prometheus that serves TLS, wants
// a client certificate from its CA and a basic auth user (its own web
// configuration) answers iolens given --prometheus-ca, -cert, -key,
// -user and -password-file, and refuses it without the password.
func TestRealPrometheusTLSAndBasicAuth(t *testing.T) {
	realPrometheus(t)
	certs := etcdtest.NewCerts(t)
	// bcrypt of "iolens-test-password", cost 10, as the web
	// configuration wants it.
	const hash = "$2a$10$Ch4JXNDcyAOp0mEGHJcpheXY89uMMh9dWPE.HleiFlMCo.ewCUj9y"
	web := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: %s\nbasic_auth_users:\n  ops: %s\n",
		certs.ServerCert, certs.ServerKey, certs.CA, hash)
	tc, err := certs.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
	om, check := promhist.ScenarioForTest(start)
	p := backfilled(t, om, promtest.Options{WebConfig: web, TLS: tc,
		Header: http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("ops:iolens-test-password"))}}})
	if !strings.HasPrefix(p.URL, "https://") {
		t.Fatalf("Prometheus at %s, want https", p.URL)
	}
	dir := t.TempDir()
	pw, wrong := filepath.Join(dir, "pw"), filepath.Join(dir, "wrong")
	os.WriteFile(pw, []byte("iolens-test-password\n"), 0o600)
	os.WriteFile(wrong, []byte("guess\n"), 0o600)
	auth := promhist.Auth{CAFile: certs.CA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey, User: "ops", PasswordFile: pw}
	o := promhist.Options{From: start, To: start.Add(599 * time.Second)}
	c, err := promhist.NewClient(p.URL, auth, promhist.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := promhist.Analyze(t.Context(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	check(t, a, time.Second)
	auth.PasswordFile = wrong
	if c, err = promhist.NewClient(p.URL, auth, promhist.Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := promhist.Analyze(t.Context(), c, o); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong password: %v, want Prometheus's 401", err)
	}
}
