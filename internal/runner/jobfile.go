package runner

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// JobOptionError is a job file option (or a test's option) iolens will
// not pass to fio: one it does not know or cannot vouch for, one it sets
// itself, or a value out of range.
type JobOptionError struct {
	File, Section string
	Line          int
	Key, Value    string
	// Reason says what is wrong; Err is the value's parse error, if any.
	Reason string
	Err    error
	hint   string
}

func (e *JobOptionError) Error() string {
	var b strings.Builder
	if e.File != "" {
		fmt.Fprintf(&b, "job file %s, ", e.File)
	}
	fmt.Fprintf(&b, "section [%s]", e.Section)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %s=%s: %v", e.Key, e.Value, e.Err)
		return b.String()
	}
	fmt.Fprintf(&b, ": option %q is refused: %s", e.Key, e.Reason)
	return b.String()
}

func (e *JobOptionError) Unwrap() error { return e.Err }

// Hint says what to do instead.
func (e *JobOptionError) Hint() string {
	if e.hint != "" {
		return e.hint
	}
	if h := hint.Of(e.Err); h != "" {
		return h
	}
	return "fix the value"
}

// JobFileError is a job file that is not readable as a whole (syntax,
// size, an include or an expansion). It wraps fio.SyntaxError.
type JobFileError struct {
	File string
	Err  error
}

func (e *JobFileError) Error() string { return fmt.Sprintf("job file %s: %v", e.File, e.Err) }
func (e *JobFileError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *JobFileError) Hint() string {
	if h := hint.Of(e.Err); h != "" {
		return h
	}
	return "fix the job file; 'iolens suites' shows tests iolens runs as written"
}

// SuiteFromJobFile turns a fio job file into a suite: one test per job
// section, with the global sections above it applied first, as fio does.
// Only the options iolens can vouch for are accepted (AllowedOptions),
// each value checked and written back in a canonical form; any other
// option is refused with the reason. A filename or directory is replaced
// by iolens's own test file, with a note in the test: iolens never lets a
// job file choose where fio reads or writes. This is the single entry
// point for job files: run, the Kubernetes agent and node-check use it.
func SuiteFromJobFile(name, text string) (result.Suite, error) {
	secs, err := fio.ParseJobFile(text)
	if err != nil {
		return result.Suite{}, &JobFileError{File: name, Err: err}
	}
	s := result.Suite{Name: "job:" + name, Description: "custom fio job file " + name}
	var globals []fio.KV
	seen := map[string]bool{}
	for _, sec := range secs {
		if sec.Global {
			globals = append(globals, sec.Options...)
			continue
		}
		if seen[sec.Name] {
			return result.Suite{}, &JobFileError{File: name, Err: &fio.SyntaxError{Line: sec.Line,
				Reason: fmt.Sprintf("a second section named [%s]", sec.Name)}}
		}
		seen[sec.Name] = true
		spec, err := specFromSection(name, sec, globals)
		if err != nil {
			return result.Suite{}, err
		}
		s.Tests = append(s.Tests, spec)
	}
	return s, nil
}

// specFromSection builds one test. fio's defaults apply where the file
// says nothing: rw=read, bs=4k, iodepth=1, numjobs=1, buffered, psync.
func specFromSection(file string, sec fio.Section, globals []fio.KV) (result.TestSpec, error) {
	// Without time_based, fio stops at size or runtime.
	spec := result.TestSpec{Name: sec.Name, RW: "read", BlockSize: 4096, IODepth: 1, NumJobs: 1, IOEngine: "psync", StopAtSize: true}
	placed := ""
	mixSet := false
	fail := func(kv fio.KV, reason string, err error, hint string) error {
		return &JobOptionError{File: file, Section: sec.Name, Line: kv.Line, Key: kv.Key, Value: kv.Value, Reason: reason, Err: err, hint: hint}
	}
	for _, kv := range append(append([]fio.KV{}, globals...), sec.Options...) {
		switch kv.Key {
		case "name":
			continue // the section's name is the test's
		case "description":
			spec.Description = kv.Value
			continue
		case "filename", "directory":
			if placed == "" {
				placed = kv.Key + "=" + kv.Value
			}
			continue
		}
		key, val, err := checkOption(kv.Key, kv.Value)
		if errors.Is(err, errRefused) {
			return spec, fail(kv, whyRefused(kv.Key), nil, refusedHint(kv.Key))
		}
		if err != nil {
			return spec, fail(kv, "", err, "")
		}
		setOption(&spec, key, val)
		mixSet = mixSet || key == "rwmixread" || key == "rwmixwrite"
	}
	if !mixSet && spec.Mixed() {
		// fio's default share, written out: a mixed test's record always
		// says how it was mixed, and 0 stays 0.
		spec.RWMixRead = 50
	}
	if !spec.StopAtSize && spec.RuntimeS == 0 {
		return spec, &JobOptionError{File: file, Section: sec.Name, Line: sec.Line, Key: "time_based", Reason: "a time-based test needs a runtime",
			hint: "set runtime, or remove time_based to stop when size is done"}
	}
	if placed != "" {
		spec.Notes = append(spec.Notes, fmt.Sprintf("the job file's %s is not used: iolens runs the test on its own file in its scratch directory", placed))
	}
	// A job that names a file shares it, as fio's jobs do; otherwise a
	// job with its own size gets a file of its own, as fio would make one
	// per job.
	spec.OwnFile = placed == "" && spec.SizeBytes > 0
	if err := CheckSpec(spec); err != nil {
		var se *SpecError
		if errors.As(err, &se) {
			return spec, &JobOptionError{File: file, Section: sec.Name, Line: sec.Line, Key: se.Field, Value: se.Value, Reason: se.Reason, hint: se.Hint()}
		}
		return spec, err
	}
	return spec, nil
}

// setOption puts a checked option in the typed field fio's option maps
// to, or in Options (replacing an earlier setting, as fio does).
func setOption(s *result.TestSpec, key, val string) {
	switch key {
	case "rw":
		s.RW = val
		return
	case "bs":
		s.BlockSize, _ = strconv.ParseInt(val, 10, 64)
		return
	case "iodepth":
		s.IODepth, _ = strconv.Atoi(val)
		return
	case "numjobs":
		s.NumJobs, _ = strconv.Atoi(val)
		return
	case "rwmixread":
		s.RWMixRead, _ = strconv.Atoi(val)
		return
	case "rwmixwrite":
		n, _ := strconv.Atoi(val)
		s.RWMixRead = 100 - n
		return
	case "direct":
		s.Direct = val == "1"
		return
	case "buffered":
		s.Direct = val == "0"
		return
	case "ioengine":
		s.IOEngine = val
		return
	case "fdatasync":
		s.Fdatasync, _ = strconv.Atoi(val)
		return
	case "size":
		s.SizeBytes, _ = strconv.ParseInt(val, 10, 64)
		return
	case "runtime", "ramp_time":
		d, _ := parseFioTime(val, time.Second)
		if key == "runtime" {
			s.RuntimeS = d.Seconds()
		} else {
			s.RampS = d.Seconds()
		}
		return
	case "time_based":
		s.StopAtSize = val == "0"
		return
	}
	for i, o := range s.Options {
		if o.Key == key {
			s.Options[i].Value = val
			return
		}
	}
	s.Options = append(s.Options, result.Option{Key: key, Value: val})
}

// typedOptions are the options setOption keeps in typed fields; in a
// test's Options they would override what the runner writes.
var typedOptions = map[string]bool{"rw": true, "bs": true, "iodepth": true, "numjobs": true, "rwmixread": true, "rwmixwrite": true,
	"direct": true, "buffered": true, "ioengine": true, "fdatasync": true, "size": true, "runtime": true, "ramp_time": true, "time_based": true}

// SpecError is a test iolens will not run: a field or option out of the
// range iolens checks.
type SpecError struct {
	Test, Field, Value, Reason string
	hint                       string
}

func (e *SpecError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("test %s: %s=%s: %s", e.Test, e.Field, e.Value, e.Reason)
	}
	return fmt.Sprintf("test %s: %s: %s", e.Test, e.Field, e.Reason)
}

// Hint says what to change.
func (e *SpecError) Hint() string {
	if e.hint != "" {
		return e.hint
	}
	return "change the value to one in the range given"
}

// CheckSpec checks a test the way SuiteFromJobFile checks a job file:
// every typed field within range and every option allowed. Run checks
// every test with it, whatever built the suite.
func CheckSpec(s result.TestSpec) error {
	bad := func(field, value, reason, hint string) error {
		return &SpecError{Test: s.Name, Field: field, Value: value, Reason: reason, hint: hint}
	}
	if s.Name == "" || len(s.Name) > 128 {
		return bad("name", s.Name, "a test needs a name of 1 to 128 characters", "")
	}
	if strings.HasPrefix(s.Name, "global") {
		return bad("name", s.Name, "fio takes a section named global... as its global options", "rename the test")
	}
	check := func(key, val string) error {
		if _, _, err := checkOption(key, val); err != nil {
			if errors.Is(err, errRefused) {
				return bad(key, val, "refused: "+whyRefused(key), refusedHint(key))
			}
			return bad(key, val, err.Error(), hint.Of(err))
		}
		return nil
	}
	secs := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	for _, f := range []struct{ k, v string }{
		{"rw", s.RW}, {"bs", strconv.FormatInt(s.BlockSize, 10)}, {"ioengine", s.IOEngine},
		{"rwmixread", strconv.Itoa(s.RWMixRead)}, {"fdatasync", strconv.Itoa(s.Fdatasync)},
	} {
		if err := check(f.k, f.v); err != nil {
			return err
		}
	}
	// 0 means "the default" for these two in built-in specs.
	if s.IODepth != 0 {
		if err := check("iodepth", strconv.Itoa(s.IODepth)); err != nil {
			return err
		}
	}
	if s.NumJobs != 0 {
		if err := check("numjobs", strconv.Itoa(s.NumJobs)); err != nil {
			return err
		}
	}
	if s.SizeBytes != 0 {
		if err := check("size", strconv.FormatInt(s.SizeBytes, 10)); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		k string
		v float64
	}{{"runtime", s.RuntimeS}, {"ramp_time", s.RampS}} {
		if math.IsNaN(t.v) || math.IsInf(t.v, 0) || t.v < 0 || t.v > maxTestTime.Seconds() {
			return bad(t.k, secs(t.v), fmt.Sprintf("want seconds from 0 to %.0f", maxTestTime.Seconds()), "")
		}
	}
	var maxBlock int64 = s.BlockSize
	for _, o := range s.Options {
		if o.Key == "filename" || o.Key == "directory" {
			return bad(o.Key, o.Value, "iolens places the test file itself", "remove it")
		}
		if typedOptions[o.Key] {
			return bad(o.Key, o.Value, "it has a field of its own in the test", "set the test's field instead of an option")
		}
		if err := check(o.Key, o.Value); err != nil {
			return err
		}
		_, v, _ := checkOption(o.Key, o.Value)
		switch o.Key {
		case "bsrange":
			_, hi, _ := strings.Cut(v, "-")
			n, _ := strconv.ParseInt(hi, 10, 64)
			maxBlock = max(maxBlock, n)
		case "bssplit":
			for _, p := range strings.Split(v, ":") {
				sz, _, _ := strings.Cut(p, "/")
				n, _ := strconv.ParseInt(sz, 10, 64)
				maxBlock = max(maxBlock, n)
			}
		}
	}
	if err := checkWaits(s); err != nil {
		return err
	}
	depth, jobs := int64(max(s.IODepth, 1)), int64(max(s.NumJobs, 1))
	if per := maxBlock * depth; per > maxBuffersPerJob || per*jobs > maxBuffers {
		return bad("bs x iodepth x numjobs", fmt.Sprintf("%dx%dx%d", maxBlock, depth, jobs),
			fmt.Sprintf("fio would allocate %s of IO buffers; iolens allows %s per job and %s in all",
				units.HumanBytes(float64(per*jobs)), units.HumanBytes(maxBuffersPerJob), units.HumanBytes(maxBuffers)),
			"lower the block size, iodepth or numjobs")
	}
	return nil
}

// noRuntimeBound is how long a test without a runtime (one that stops
// at its size, as the etcd suite's) may run: iolens gives fio this
// runtime, so that a slow disk or a rate limit ends it with its results.
const noRuntimeBound = time.Hour

// bound is the time fio may measure a test for: its runtime, or
// NoRuntimeBound.
func bound(s result.TestSpec) time.Duration {
	if s.RuntimeS > 0 {
		return s.Runtime()
	}
	return noRuntimeBound
}

// fioRuntime is the runtime iolens gives fio: the test's bound less its
// waits, since fio does not count startdelay in its runtime and checks
// the runtime only after a thinktime. The test then ends within its
// runtime (and ramp), as announced. checkWaits keeps it positive.
func fioRuntime(s result.TestSpec) time.Duration {
	think, delay := waits(s)
	return bound(s) - think - delay
}

// waits are the times fio spends outside the runtime's IO: startdelay
// before the job, and thinktime (with its spin) after each IO or batch,
// which fio checks the runtime only after.
func waits(s result.TestSpec) (think, delay time.Duration) { return s.Waits() }

// checkWaits keeps fio's waits within the test's runtime: a thinktime
// longer than the runtime makes one IO, then waits past the end.
func checkWaits(s result.TestSpec) error {
	think, delay := waits(s)
	limit := bound(s)
	what := fmt.Sprintf("the test's %s runtime", units.FormatSeconds(limit.Seconds()))
	if s.RuntimeS == 0 {
		what = fmt.Sprintf("the %s iolens gives a test without a runtime", units.FormatSeconds(limit.Seconds()))
	}
	if think >= limit {
		return &SpecError{Test: s.Name, Field: "thinktime", Value: think.String(),
			Reason: fmt.Sprintf("fio would wait %s after an IO (thinktime plus thinktime_spin), as long as %s or longer: the test would run past it", think, what),
			hint:   "lower thinktime, or raise runtime (--runtime)"}
	}
	if delay >= limit {
		return &SpecError{Test: s.Name, Field: "startdelay", Value: delay.String(),
			Reason: fmt.Sprintf("fio would wait %s before the test starts, as long as %s or longer", delay, what), hint: "lower startdelay, or raise runtime (--runtime)"}
	}
	// Both count against the runtime (fioRuntime): some time must be
	// left for IO.
	if think+delay >= limit {
		return &SpecError{Test: s.Name, Field: "startdelay", Value: delay.String(),
			Reason: fmt.Sprintf("startdelay (%s) and thinktime (%s) together take all of %s: no time would be left for IO", delay, think, what),
			hint:   "lower startdelay or thinktime, or raise runtime (--runtime)"}
	}
	return nil
}

// checkSuite checks every test of a suite with CheckSpec.
func checkSuite(s result.Suite) error {
	for _, t := range s.Tests {
		if err := CheckSpec(t); err != nil {
			return err
		}
	}
	return nil
}

// ReadJobFile reads the job file at path for SuiteFromJobFile. It refuses
// what is not a regular file (a FIFO would block, a device never end) and
// reads at most one byte more than fio.MaxJobFileBytes, so a huge file is
// refused by its size rather than loaded.
func ReadJobFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", &JobFileError{File: path, Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", &JobFileError{File: path, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return "", &JobFileError{File: path, Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type())}
	}
	b, err := io.ReadAll(io.LimitReader(f, fio.MaxJobFileBytes+1))
	if err != nil {
		return "", &JobFileError{File: path, Err: err}
	}
	if len(b) > fio.MaxJobFileBytes {
		return "", &JobFileError{File: path, Err: &fio.SyntaxError{Reason: fmt.Sprintf("job file is more than the %d bytes iolens reads", fio.MaxJobFileBytes)}}
	}
	return string(b), nil
}
