package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
)

func TestProgress(t *testing.T) {
	spec := result.TestSpec{Name: "randread-4k-qd1", RW: "randread", BlockSize: 4096, IODepth: 1, NumJobs: 1}
	res := &result.Result{Status: "ok"}
	sum := func(r *result.Result) string { return "IOPS " + r.Status }
	events := []runner.Event{
		{Kind: runner.EventInfo, Message: "preparing"},
		{Kind: runner.EventTestStart, Index: 2, Total: 6, Test: spec, Elapsed: 65 * time.Second, ETA: 3 * time.Minute},
		{Kind: runner.EventStatus, Index: 2, Total: 6, Test: spec, Elapsed: 70 * time.Second, IOPS: 412, BWBytes: 1.6e6},
		{Kind: runner.EventTestEnd, Index: 2, Total: 6, Test: spec, Result: res},
	}

	var b bytes.Buffer
	p := &Run{W: &b, Summary: sum}
	for _, e := range events {
		p.Event(e)
	}
	got := b.String()
	for _, want := range []string{"preparing\n", "[2/6] randread-4k-qd1 (", "started, elapsed 01:05, about 03:00 left\n", "[2/6] randread-4k-qd1: IOPS ok\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("plain: no %q in %q", want, got)
		}
	}
	if strings.Contains(got, "\r") || strings.Contains(got, "412") {
		t.Errorf("plain output has a live line: %q", got)
	}

	b.Reset()
	p = &Run{W: &b, TTY: true, Width: 40, Summary: sum}
	for _, e := range events {
		p.Event(e)
	}
	p.Line("note")
	p.Done()
	got = b.String()
	if !strings.Contains(got, "\r\033[K[2/6] randread-4k-qd1  01:10, ETA 00:00") {
		t.Errorf("tty: no live line in %q", got)
	}
	for _, l := range strings.Split(got, "\r\033[K") {
		if first, _, _ := strings.Cut(l, "\n"); len(first) > 39 {
			t.Errorf("live line %q is wider than the terminal", first)
		}
	}
	if !strings.HasSuffix(got, "IOPS ok\nnote\n") {
		t.Errorf("tty: the end line and note are not last: %q", got)
	}

	b.Reset()
	p = &Run{W: &b, Quiet: true}
	for _, e := range events {
		p.Event(e)
	}
	p.Line("x")
	if b.Len() != 0 {
		t.Errorf("quiet wrote %q", b.String())
	}
}

// Issue 39.7: a run refused before it starts prints no run id or budget
// line; one that starts prints it first.
func TestHeaderWaitsForTheRun(t *testing.T) {
	var b bytes.Buffer
	p := &Run{W: &b}
	p.Header("iolens diagnose %s: budget 3m0s", "r1")
	p.Done()
	if b.Len() != 0 {
		t.Errorf("printed before anything else: %q", b.String())
	}
	p.Event(runner.Event{Kind: runner.EventInfo, Message: "preparing"})
	if got := b.String(); got != "iolens diagnose r1: budget 3m0s\npreparing\n" {
		t.Errorf("got %q", got)
	}
	p.Line("next")
	if strings.Count(b.String(), "budget") != 1 {
		t.Errorf("header twice: %q", b.String())
	}
}
