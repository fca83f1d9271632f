package pipeline

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"
)

// TestOpenAndReport: a run that keeps its results in a history says where
// they are at the end; an address the metrics cannot listen on is the
// caller's mistake and leaves nothing open; --no-save keeps nothing and
// says nothing.
func TestOpenAndReport(t *testing.T) {
	ctx := context.Background()
	var log strings.Builder
	db := filepath.Join(t.TempDir(), "h.db")
	k, err := Open(ctx, Options{RunID: "r1", Suite: "s", DB: db, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Keep.Add(ctx, result.Result{Schema: result.Schema, RunID: "r1", Status: "ok", Suite: "s", Test: result.TestSpec{Name: "t"}}); err != nil {
		t.Fatal(err)
	}
	var end strings.Builder
	k.Report(ctx, &end)
	k.Close()
	if want := "saved as run r1 in " + db; !strings.Contains(end.String(), want) {
		t.Errorf("report: %q, want %q", end.String(), want)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Open(ctx, Options{RunID: "r2", NoSave: true, MetricsAddr: ln.Addr().String(), Log: &log})
	var u *hint.UsageError
	if !errors.As(err, &u) || hint.Of(err) == "" {
		t.Errorf("metrics on a busy address: %v, want a usage error with a hint", err)
	}

	k, err = Open(ctx, Options{RunID: "r3", NoSave: true, Log: &log})
	if err != nil || k.Store != nil || k.Keep != nil {
		t.Fatalf("--no-save: %+v, %v", k, err)
	}
	end.Reset()
	k.Report(ctx, &end)
	if end.Len() != 0 {
		t.Errorf("--no-save said %q", end.String())
	}
}
