package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Issue 34.3: a history whose run summary holds a figure no run gives
// (+Inf, a negative, 1e308: a database changed by hand) lists it as
// unknown: "-" in text, null in JSON, never +Inf or 309 digits.
func TestListUnknownFigures(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if _, err := s.Save(ctx, []result.Result{mkResult("20240501-120000-aaaaaa", 1, nil, 1000)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET max_iops = 9e999, max_bw_bytes = -1, max_p99_ns = 1e308`); err != nil {
		t.Fatal(err)
	}
	runs, err := s.List(ctx, ListOptions{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%v, %v", runs, err)
	}
	r := runs[0]
	if !math.IsNaN(r.MaxIOPS) || !math.IsNaN(r.MaxBWBytes) || !math.IsNaN(r.MaxP99Ns) {
		t.Errorf("figures read as %v, %v, %v; want unknown", r.MaxIOPS, r.MaxBWBytes, r.MaxP99Ns)
	}
	var buf bytes.Buffer
	if err := WriteRunList(&buf, runs); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if strings.Contains(text, "Inf") || strings.Contains(text, "NaN") || strings.Contains(text, "100000000") || strings.Contains(text, "-0.0") {
		t.Errorf("history lists a figure no run gives:\n%s", text)
	}
	if f := strings.Fields(strings.Split(text, "\n")[1]); len(f) != 11 || f[8] != "-" || f[9] != "-" || f[10] != "-" {
		t.Errorf("unknown figures not shown as '-': %q", f)
	}
	b, err := json.Marshal(runs)
	if err != nil {
		t.Fatalf("JSON of a run with unknown figures: %v", err)
	}
	if !strings.Contains(string(b), `"max_iops":null`) || !strings.Contains(string(b), `"max_p99_ns":null`) || !strings.Contains(string(b), `"tests":1`) {
		t.Errorf("JSON = %s", b)
	}
}

// A stored record with a figure no run gives is refused when read back,
// naming the field, as a file's would be.
func TestStoredRecordFigures(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	r := mkResult("20240501-120000-aaaaaa", 1, nil, 1000)
	if _, err := s.Save(ctx, []result.Result{r}); err != nil {
		t.Fatal(err)
	}
	b, err := result.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), `"iops":1000`, `"iops":1e308`, 1)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(bad))
	zw.Close()
	if _, err := s.db.ExecContext(ctx, `UPDATE results SET record_gz = ?`, gz.Bytes()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Results(ctx, r.RunID); err == nil || !strings.Contains(err.Error(), "read.iops") {
		t.Errorf("a stored record with iops 1e308 read as %v", err)
	}
}

// Issue 34.6: a run id, a suite or labels imported with a line break
// cannot start a line of the history's listing.
func TestRunListOneLinePerRun(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	r := mkResult("20240501-120000-aaaaaa\nFORGED run", 1, map[string]string{"team": "a\r\nFORGED label"}, 1000)
	r.Suite = "quick\u2028FORGED suite"
	r.Target.Path = "/mnt/x\nFORGED path"
	if _, err := s.Import(ctx, []result.Result{r}); err != nil {
		t.Fatal(err)
	}
	runs, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteRunList(&buf, runs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 || strings.Contains(buf.String(), "\u2028") {
		t.Errorf("%d lines for one run:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "FORGED") {
			t.Errorf("a line forged: %q", l)
		}
	}
}
