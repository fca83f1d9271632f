package emulate

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Unreadable sectors fail reads that touch them, not writes, and only
// once armed; a device down 1 s in 5 fails every kind of IO in the last
// second of each period.
func TestMediaFails(t *testing.T) {
	m := newMedia(&Faults{ReadErrorFrom: 1 << 20, ReadErrorTo: 2 << 20, DownEvery: 5 * time.Second, DownFor: time.Second}, nil, 4<<20)
	at := time.Unix(1000, 0)
	if m.fails(ioRead, 1<<20, 4096, at) {
		t.Error("failed before it was armed")
	}
	m.armedAt = at
	for _, c := range []struct {
		k       ioKind
		off, n  int64
		after   time.Duration
		want    bool
		because string
	}{
		{ioRead, 1 << 20, 4096, 0, true, "the region's first block"},
		{ioRead, 1<<20 - 4096, 4096, 0, false, "the block before it"},
		{ioRead, 1<<20 - 4096, 8192, 0, true, "an IO that reaches into it"},
		{ioRead, 2 << 20, 4096, 0, false, "the block after it"},
		{ioWrite, 1 << 20, 4096, 0, false, "a write there"},
		{ioWrite, 0, 4096, 4*time.Second + time.Millisecond, true, "a write while down"},
		{ioFlush, 0, 0, 9500 * time.Millisecond, true, "a flush while down"},
		{ioRead, 0, 4096, 3999 * time.Millisecond, false, "a read just before"},
		{ioRead, 0, 4096, 5 * time.Second, false, "a read just after"},
	} {
		if got := m.fails(c.k, c.off, c.n, at.Add(c.after)); got != c.want {
			t.Errorf("%s: fails %v, want %v", c.because, got, c.want)
		}
	}
}

// A block is cold on its first read since arming (and arming again
// makes every block cold), warm after it, and a written block is warm.
func TestMediaCold(t *testing.T) {
	m := newMedia(nil, &Cold{Latency: 17 * time.Millisecond, BlockBytes: 64 << 10}, 1<<30)
	if d := m.touch(ioRead, 0, 4096); d != 0 {
		t.Errorf("cold before arming: %v", d)
	}
	arm := filepath.Join(t.TempDir(), armFileName)
	if err := os.WriteFile(arm, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.check(arm)
	for _, c := range []struct {
		k      ioKind
		off, n int64
		want   time.Duration
	}{
		{ioRead, 0, 4096, 17 * time.Millisecond},
		{ioRead, 60 << 10, 4096, 0},                         // the same 64 KiB block
		{ioRead, 64 << 10, 4096, 17 * time.Millisecond},     // the next
		{ioWrite, 128 << 10, 64 << 10, 0},                   // written: warm
		{ioRead, 128 << 10, 4096, 0},                        // so no wait
		{ioRead, 120 << 10, 16 << 10, 0},                    // spans two warm blocks
		{ioRead, 1<<30 - 4096, 4096, 17 * time.Millisecond}, // the last block
		{ioRead, 1<<30 - 4096, 4096, 0},
	} {
		if got := m.touch(c.k, c.off, c.n); got != c.want {
			t.Errorf("%v at %d+%d: %v, want %v", c.k, c.off, c.n, got, c.want)
		}
	}
	if err := os.WriteFile(arm, []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.check(arm)
	if got := m.touch(ioRead, 0, 4096); got != 17*time.Millisecond {
		t.Errorf("after arming again: %v, want cold", got)
	}
}

func TestFaultsValidate(t *testing.T) {
	base := Spec{Name: "f", SizeBytes: 1 << 30}
	for _, c := range []struct {
		s  Spec
		ok bool
	}{
		{Spec{Faults: &Faults{ReadErrorFrom: 64 << 20, ReadErrorTo: 1 << 30}}, true},
		{Spec{Faults: &Faults{DownEvery: 5 * time.Second, DownFor: time.Second}}, true},
		{Spec{Faults: &Faults{ReadErrorFrom: 2, ReadErrorTo: 1}}, false},
		{Spec{Faults: &Faults{ReadErrorTo: 2 << 30}}, false},
		{Spec{Faults: &Faults{DownEvery: time.Second, DownFor: time.Second}}, false},
		{Spec{Faults: &Faults{DownEvery: time.Second}}, false},
		{Spec{Faults: &Faults{DownEvery: 5 * time.Second, DownFor: time.Second}, FS: "xfs"}, false},
		{Spec{Cold: &Cold{Latency: 17 * time.Millisecond, BlockBytes: 64 << 10}}, true},
		{Spec{Cold: &Cold{Latency: 17 * time.Millisecond, BlockBytes: 5000}}, false},
		{Spec{Cold: &Cold{BlockBytes: 4096}}, false},
		{Spec{Cold: &Cold{Latency: time.Millisecond, BlockBytes: 4096}, SizeBytes: 1 << 40}, false},
	} {
		s := c.s
		s.Name = base.Name
		if s.SizeBytes == 0 {
			s.SizeBytes = base.SizeBytes
		}
		err := s.withDefaults().Validate()
		if (err == nil) != c.ok {
			t.Errorf("%+v %+v: %v", s.Faults, s.Cold, err)
		}
		if err == nil && s.withDefaults().Latency == nil {
			t.Errorf("%+v: no latency layer", s)
		}
	}
}

// The flags of a failing disk and a restored volume, as given.
func TestMediaOptions(t *testing.T) {
	given := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, x := range names {
				if x == n {
					return true
				}
			}
			return false
		}
	}
	base := SpecOptions{Size: "1G", Scale: 1, Cgroup: "auto", Cache: "none"}
	o := base
	o.ReadErrors, o.DownEvery, o.DownFor, o.Set = "64MiB-1GiB", "5s", "1s", given("read-errors", "down-every", "down-for")
	s, err := o.Spec("f", "/x")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Faults{ReadErrorFrom: 64 << 20, ReadErrorTo: 1 << 30, DownEvery: 5 * time.Second, DownFor: time.Second}); s.Faults == nil || *s.Faults != want || s.Cold != nil {
		t.Errorf("faults %+v, want %+v", s.Faults, want)
	}
	if err := s.withDefaults().Validate(); err != nil {
		t.Error(err)
	}
	o = base
	o.ColdRead, o.ColdBlock, o.Set = "17ms", "1MiB", given("cold-read", "cold-block")
	if s, err = o.Spec("c", "/x"); err != nil || s.Cold == nil || *s.Cold != (Cold{Latency: 17 * time.Millisecond, BlockBytes: 1 << 20}) || s.Faults != nil {
		t.Errorf("cold %+v, %v", s.Cold, err)
	}
	for _, bad := range []SpecOptions{
		{ReadErrors: "64MiB", Set: given("read-errors")},
		{ReadErrors: "a-b", Set: given("read-errors")},
		{DownEvery: "often", Set: given("down-every")},
		{ColdRead: "slow", Set: given("cold-read")},
		{ColdBlock: "64KiB", Set: given("cold-block")},
	} {
		b := base
		b.ReadErrors, b.DownEvery, b.ColdRead, b.ColdBlock, b.Set = bad.ReadErrors, bad.DownEvery, bad.ColdRead, bad.ColdBlock, bad.Set
		if _, err := b.Spec("x", "/x"); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
