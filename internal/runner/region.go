package runner

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// region is where one test's IO goes: the file fio is given (the shared
// test file, a file of the test's own, or the device), the size= and
// offset_increment= iolens writes for it, and how far into that file or
// device the IO may reach. Every test is placed by region, and the space
// and device checks read the same end, so what is checked is what fio
// does.
type region struct {
	file string
	// own is a file of the test's own in the scratch directory, removed
	// when the test ends. On a device, a test that would have its own
	// file gets its own region at the start of the device instead.
	own bool
	// size is the size= written (per job); inc an offset_increment
	// iolens adds to split the shared file between jobs (0: none).
	size, inc int64
	// end is the byte past the last one any job may touch.
	end int64
}

// RegionError is a test whose IO would reach past the file or device
// iolens prepared for it.
type RegionError struct {
	Test string
	// End is where the test's IO ends; Limit what it may use, and Of
	// what that is ("the 1.0 GiB test file", "/dev/sdb").
	End, Limit int64
	Of         string
	Device     bool
}

func (e *RegionError) Error() string {
	return fmt.Sprintf("test %s: its IO reaches %s into %s, past the %s iolens may use",
		e.Test, units.HumanBytes(float64(e.End)), e.Of, units.HumanBytes(float64(e.Limit)))
}

// Hint says what to change.
func (e *RegionError) Hint() string {
	if e.Device {
		return "lower size, filesize, offset or offset_increment (numjobs multiplies offset_increment), or test a larger device; iolens never writes past the device's end or the --size given"
	}
	return "lower size, filesize, offset or offset_increment (numjobs multiplies offset_increment), or pass a larger --size"
}

// optInt is the value of a size option of s, 0 when unset.
func optInt(s result.TestSpec, key string) int64 {
	var n int64
	for _, o := range s.Options {
		if o.Key == key {
			n, _ = strconv.ParseInt(o.Value, 10, 64)
		}
	}
	return n
}

// addSat and mulSat saturate at MaxInt64: option values go up to 2^60 and
// numjobs to 64, whose products overflow.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// ownsFile reports whether the test has a file (or device region) of its
// own rather than the shared one.
func (r *runner) ownsFile(s result.TestSpec) bool { return s.OwnFile || r.sharedFile == "" }

// region places test s (after effective). The shared test file or the
// device bounds the tests that use it; a test's own file is bounded by
// the space check (Open, and spaceFor before it runs).
func (r *runner) region(s result.TestSpec) (region, error) {
	off, inc := optInt(s, "offset"), optInt(s, "offset_increment")
	filesize, align := optInt(s, "filesize"), optInt(s, "offset_align")
	jobs := int64(max(s.NumJobs, 1))
	g := region{file: r.sharedFile}
	own := r.ownsFile(s)
	limit, of := r.target.SizeBytes, "the shared test file"
	switch {
	case r.cfg.Device != "":
		g.file = r.cfg.Device
		of = r.cfg.Device
		if own {
			// A test of its own file runs in a region of its own: the
			// device from its start, up to what iolens may use of it.
			limit = r.owned
		}
	case own:
		g.file, g.own = filepath.Join(r.scratch, safeName(s.Name)+".dat"), true
	}
	size := s.SizeBytes
	if size == 0 {
		if own {
			size = r.target.SizeBytes
		} else {
			// As fio does with an existing file: the job covers the file
			// from its offset to its end; several jobs split it.
			rest := limit - off - align
			if jobs > 1 && inc == 0 {
				g.inc = rest / jobs &^ (1<<20 - 1)
				size = g.inc
			} else {
				size = rest - mulSat(inc, jobs-1)
			}
			if size <= 0 {
				return g, &RegionError{Test: s.Name, End: addSat(addSat(off, align), mulSat(max(inc, 1<<20), jobs)), Limit: limit, Of: of, Device: r.cfg.Device != ""}
			}
		}
	}
	g.size = size
	step := inc
	if g.inc > 0 {
		step = g.inc
	}
	g.end = addSat(addSat(addSat(off, align), mulSat(step, jobs-1)), size)
	g.end = max(g.end, filesize)
	if !g.own && g.end > limit {
		return g, &RegionError{Test: s.Name, End: g.end, Limit: limit, Of: of, Device: r.cfg.Device != ""}
	}
	return g, nil
}

// slowRate is the rate below which a disk counts as broken for the
// bound on fio: fio lays out and verifies files outside its runtime, at
// the disk's pace, and gets this long for them.
const slowRate = 1e6 // bytes/s

// boundOf is how long fio may run test s before iolens stops it: the
// startdelay, ramp, runtime (or NoRuntimeBound) and one more wait, the
// layout of a file of its own and a verify pass at slowRate, the
// writeback cap for buffered writes (end_fsync waits for it), and a
// margin for fio's start and report.
func (r *runner) boundOf(s result.TestSpec, g region) time.Duration {
	think, delay := waits(s)
	run := bound(s)
	d := delay + s.Ramp() + run + think
	layout := time.Duration(float64(g.end) / slowRate * float64(time.Second))
	if g.own {
		d += layout
	}
	for _, o := range s.Options {
		if o.Key == "verify" && o.Value != "0" || o.Key == "verify_only" && o.Value != "0" {
			d += layout + run
			break
		}
	}
	if !s.Direct && s.Writes() && r.cfg.WritebackCap > 0 {
		d += r.cfg.WritebackCap
	}
	margin := max(2*time.Minute, run/4)
	if r.cfg.BoundMargin > 0 {
		margin = r.cfg.BoundMargin
	}
	return d + margin
}

// BoundError is a test that ran past its bound: iolens stopped fio.
type BoundError struct {
	Test  string
	Bound time.Duration
	// Killed says fio did not stop on SIGINT and was killed.
	Killed bool
}

func (e *BoundError) Error() string {
	how := "stopped"
	if e.Killed {
		how = "killed"
	}
	return fmt.Sprintf("fio ran test %s for %s, past its bound (runtime, ramp, waits and a margin), and was %s", e.Test, e.Bound.Round(time.Second), how)
}

// Hint says where to look.
func (e *BoundError) Hint() string {
	return "the disk may be hung or far slower than the test assumes (check dmesg and the device series), or the test's rate limits and thinktime stretch it; fio's messages are in the result's fio_stderr"
}
