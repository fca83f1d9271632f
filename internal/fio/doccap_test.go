package fio

import (
	"io"
	"runtime"
	"strings"
	"testing"
)

// endless is fio-like output whose one document never ends: "{", then
// option lines for ever, made as they are read.
type endless struct {
	line string
	head bool
	off  int
	n    int64
}

func (e *endless) Read(p []byte) (int, error) {
	if !e.head {
		e.head = true
		return copy(p, "{\n  \"jobs\" : [\n    {\n      \"job options\" : {\n"), nil
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.line[e.off:])
		n += c
		e.off = (e.off + c) % len(e.line)
	}
	e.n += int64(n)
	return n, nil
}

// Issue 27.6: a fio JSON document longer than MaxDocumentBytes is refused
// once it is that long, and what it took to refuse is a small multiple of
// the cap, never of the input (a 320 MB document took 1.2 GiB when the
// cap was 256 MiB).
func TestDocumentCap(t *testing.T) {
	in := &endless{line: `        "key" : "` + strings.Repeat("x", 200) + "\",\n"}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadResults(io.LimitReader(in, 320e6), "big.json")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "longer than 64 MiB") {
		t.Fatalf("err = %v, want the document refused", err)
	}
	if in.n > maxDocumentBytes+8<<20 {
		t.Errorf("read %d MiB before refusing a document past %d MiB", in.n>>20, maxDocumentBytes>>20)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 5*maxDocumentBytes {
		t.Errorf("allocated %d MiB to refuse it, more than 5 times the cap", alloc>>20)
	}
}
