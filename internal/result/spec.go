package result

import (
	"fmt"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// TestSpec is one fio test as iolens runs it. Built-in suites fill the
// typed fields; tests read from a job file carry their section's options
// in Options and have the typed fields filled where fio's meaning is clear.
type TestSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// RW is fio's rw= (read, write, randread, randwrite, randrw, rw...).
	RW        string `json:"rw"`
	BlockSize int64  `json:"bs_bytes"`
	IODepth   int    `json:"iodepth"`
	NumJobs   int    `json:"numjobs"`
	// RWMixRead is the percentage of reads of a mixed test (rw,
	// readwrite, randrw): 0 is all writes. iolens writes it to fio for
	// every mixed test; fio's own default is 50.
	RWMixRead int  `json:"rwmixread"`
	Direct    bool `json:"direct"`
	// DirectUnknown says the source did not tell whether the test went
	// through the page cache (fio's text output names no direct=, nor
	// did its JSON before 2.3): Direct is then false but means nothing.
	DirectUnknown bool   `json:"direct_unknown,omitempty"`
	IOEngine      string `json:"ioengine"`
	// Fdatasync issues an fdatasync after this many writes (etcd style).
	Fdatasync int `json:"fdatasync,omitempty"`
	// Runtime and Ramp are in seconds. A test with a Runtime is time
	// based: it runs for Runtime, going over its file as often as needed,
	// unless StopAtSize is set: then it stops when it has done its size
	// or at Runtime, whichever comes first (fio without time_based, as in
	// the 2019 AKS write-up). A zero Runtime runs until the size is done
	// (the etcd test).
	RuntimeS   float64 `json:"runtime_s"`
	RampS      float64 `json:"ramp_s"`
	StopAtSize bool    `json:"stop_at_size,omitempty"`
	// SizeBytes fixes the file size for this test; 0 uses the target's.
	SizeBytes int64 `json:"size_bytes"`
	// OwnFile gives the test a file of its own instead of the shared,
	// preconditioned one (small fsync tests, job files).
	OwnFile bool `json:"own_file,omitempty"`
	// Group ties tests that are read together, such as a QD sweep.
	Group string `json:"group,omitempty"`
	// Options are extra fio options, in order, applied after the typed
	// fields (a job file's whole section lives here).
	Options []Option `json:"options,omitempty"`
	// Notes say how the test differs from what it was read from (a job
	// file's filename replaced by iolens's own file, say). The runner
	// copies them into the test's results.
	Notes []string `json:"notes,omitempty"`
}

// Option is one fio option. An empty Value is a flag such as time_based.
type Option struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// TimeBased reports whether the test runs for its runtime whatever its
// size (fio's time_based).
func (t TestSpec) TimeBased() bool { return t.RuntimeS > 0 && !t.StopAtSize }

// Runtime is the test's time-based duration.
func (t TestSpec) Runtime() time.Duration { return secs(t.RuntimeS) }

// Waits are the times fio spends outside the runtime it measures:
// thinktime (with its spin) after each IO or batch, and startdelay before
// the job. A value fio would not read counts as no wait (the runner
// refuses it before fio runs).
func (t TestSpec) Waits() (think, delay time.Duration) {
	const most = 7 * 24 * time.Hour
	for _, o := range t.Options {
		switch o.Key {
		case "thinktime", "thinktime_spin":
			d, _ := units.ParseFioTime(o.Value, time.Microsecond, most)
			think += d
		case "startdelay":
			delay, _ = units.ParseFioTime(o.Value, time.Second, most)
		}
	}
	return think, delay
}

// Ramp is the warm-up excluded from the statistics.
func (t TestSpec) Ramp() time.Duration { return secs(t.RampS) }

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Writes reports whether the test writes to the target.
func (t TestSpec) Writes() bool {
	switch t.RW {
	case "read", "randread":
		return false
	}
	return true
}

// Buffered reports whether the test is known to go through the page
// cache (fio's direct=0).
func (t TestSpec) Buffered() bool { return !t.Direct && !t.DirectUnknown }

// Mixed reports whether the test mixes reads and writes (rwmixread
// applies).
func (t TestSpec) Mixed() bool {
	switch t.RW {
	case "rw", "readwrite", "randrw":
		return true
	}
	return false
}

// Summary is a one-line description of the test's parameters.
func (t TestSpec) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rw=%s bs=%s iodepth=%d", t.RW, units.FormatSize(t.BlockSize), t.IODepth)
	if t.NumJobs > 1 {
		fmt.Fprintf(&b, " numjobs=%d", t.NumJobs)
	}
	if t.Mixed() || t.RWMixRead > 0 {
		fmt.Fprintf(&b, " rwmixread=%d", t.RWMixRead)
	}
	switch {
	case t.DirectUnknown:
		b.WriteString(" direct=unknown")
	case !t.Direct:
		b.WriteString(" buffered")
	}
	if t.IOEngine != "" {
		fmt.Fprintf(&b, " engine=%s", t.IOEngine)
	}
	if t.Fdatasync > 0 {
		fmt.Fprintf(&b, " fdatasync=%d", t.Fdatasync)
	}
	if t.SizeBytes > 0 {
		fmt.Fprintf(&b, " size=%s", units.FormatSize(t.SizeBytes))
	}
	switch {
	case t.TimeBased():
		fmt.Fprintf(&b, " runtime=%gs", t.RuntimeS)
	case t.RuntimeS > 0:
		fmt.Fprintf(&b, " size-or-runtime=%gs", t.RuntimeS)
	}
	if t.RampS > 0 {
		fmt.Fprintf(&b, " ramp=%gs", t.RampS)
	}
	for _, o := range t.Options {
		if o.Value == "" {
			fmt.Fprintf(&b, " %s", o.Key)
		} else {
			fmt.Fprintf(&b, " %s=%s", o.Key, o.Value)
		}
	}
	return b.String()
}

// Suite is a named, ordered list of tests.
type Suite struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Tests       []TestSpec `json:"tests"`
}
