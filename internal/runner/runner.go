package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/kernlog"
	"github.com/iolens/iolens/internal/nfsstats"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Config says what to run and where.
type Config struct {
	Suite result.Suite
	// Dir is the target directory; iolens works in a subdirectory of its
	// own there and removes it afterwards. A Dir that does not exist is
	// refused unless Create is set (a typo or a volume that is not
	// mounted would measure the disk below); "" is ./iolens-scratch,
	// created when missing. What iolens creates it removes. Device, if
	// set, is a raw block device to test instead.
	Dir         string
	Create      bool
	Device      string
	Destructive bool
	Force       bool
	// SizeBytes is the shared test file's size; 0 picks one that fits.
	SizeBytes int64
	// RuntimeS overrides every time-based test's runtime when > 0;
	// RampS overrides the ramp when RampSet.
	RuntimeS float64
	RampS    float64
	RampSet  bool
	Repeat   int
	RunID    string
	Labels   map[string]string
	// Emulated names the emulated disk the target lives on, if any.
	Emulated string

	FioBinary string
	// CommandPrefix runs fio through another command (for example one
	// that places it in a throttled cgroup).
	CommandPrefix []string
	// SampleInterval is the device and fio sampling period. 0 picks one
	// per test: 250 ms for tests of a minute or less (so a short test's
	// steady state, stalls and plateaus are judged on enough samples),
	// 1 s for longer ones (fio's status reports cost it CPU).
	SampleInterval time.Duration
	// NoPrecondition skips writing the shared test file before the tests.
	NoPrecondition bool
	// Incompressible writes fresh random data for every IO, for storage
	// that compresses (ZFS, VDO, some CSI back ends).
	Incompressible bool

	// Stop, when set, gives each time-based test a rule that may end it
	// early, once it has measured enough (iolens run --until-steady,
	// diagnose's precision rules). MaxRuntimeS then caps every
	// time-based test's runtime (0: the test's own).
	Stop        func(result.TestSpec) StopRule
	MaxRuntimeS float64

	// WritebackCap bounds how long the writeback after a buffered test is
	// watched; a result says when it was reached. 0 picks
	// DefaultWritebackCap; a negative cap turns the watch off.
	WritebackCap time.Duration

	// Plan says a plan chooses the tests as it goes: Suite lists those it
	// may run (to size and vet the target), not what will run.
	Plan bool

	// BoundMargin replaces the margin a test gets past its runtime, ramp
	// and waits before iolens stops fio (0: the larger of 2 minutes and a
	// quarter of the runtime).
	BoundMargin time.Duration

	// ProcRoot, SysRoot and DevRoot are for tests (default /proc, /sys
	// and /dev).
	ProcRoot, SysRoot, DevRoot string
	IolensVersion              string
}

// Status is what a running test has done so far, at each sample.
type Status struct {
	// Elapsed is the measured time so far, in seconds (after the ramp);
	// Interval the sample period.
	Elapsed, Interval float64
	// IOPS and BWBytes are the rates over the last sample interval;
	// MeanIOPS and MeanBWBytes over the whole measurement so far.
	IOPS, BWBytes         float64
	MeanIOPS, MeanBWBytes float64
	// Out is fio's cumulative status document.
	Out *fio.Output
}

// StopRule is asked at every sample whether the test has measured enough;
// why says what was established, for the result's notes.
type StopRule func(Status) (stop bool, why string)

// Event reports progress. Library code never prints; the caller draws
// these however suits its terminal.
type Event struct {
	Kind    EventKind
	Index   int // 1-based test position within the whole run
	Total   int
	Repeat  int
	Test    result.TestSpec
	Elapsed time.Duration // since the run started
	ETA     time.Duration
	// Live figures over the last second, on Status events.
	IOPS, BWBytes float64
	Message       string
	Result        *result.Result
}

// EventKind says what an Event is about.
type EventKind string

// Event kinds.
const (
	EventInfo      EventKind = "info"
	EventPrepare   EventKind = "prepare"
	EventTestStart EventKind = "test-start"
	EventStatus    EventKind = "status"
	EventTestEnd   EventKind = "test-end"
	EventCleanup   EventKind = "cleanup"
)

// NewRunID returns a short random id for a run.
func NewRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:3])
}

// ErrTestsFailed means at least one test failed; results of the others
// were emitted.
var ErrTestsFailed = errors.New("some tests failed")

// TestsFailedError counts the failed tests of a run. It matches
// ErrTestsFailed with errors.Is.
type TestsFailedError struct{ Failed, Total int }

func (e *TestsFailedError) Error() string {
	if e.Failed == e.Total {
		return fmt.Sprintf("all %d tests failed", e.Total)
	}
	return fmt.Sprintf("%d of %d tests failed; the results of the others were kept", e.Failed, e.Total)
}

// Is makes errors.Is(err, ErrTestsFailed) true.
func (e *TestsFailedError) Is(target error) bool { return target == ErrTestsFailed }

// Partial reports whether some tests succeeded.
func (e *TestsFailedError) Partial() bool { return e.Failed < e.Total }

type runner struct {
	cfg      Config
	progress func(Event)
	start    time.Time

	fioVersion string
	engine     string
	// lease holds a tested device exclusively; readOnly is set when the
	// device is in use and only reads may run.
	lease    *DeviceLease
	readOnly bool
	host     result.Host
	target   result.Target
	// owned is how much of a tested device iolens may use: the device,
	// or --size of it.
	owned      int64
	scratch    string
	sharedFile string
	res        diskstats.Resolution
	reader     *diskstats.Reader
	planned    time.Duration
	done       time.Duration
}

// Run runs the suite, calling emit with each result as soon as its test
// ends and progress with events along the way. Test files are removed on
// success, failure and cancellation. A failing test does not stop the
// suite: its result is emitted with Status "failed" and Run returns
// ErrTestsFailed at the end.
func Run(ctx context.Context, cfg Config, emit func(result.Result) error, progress func(Event)) (err error) {
	if len(cfg.Suite.Tests) == 0 {
		return fmt.Errorf("suite %q has no tests", cfg.Suite.Name)
	}
	s, err := Open(ctx, cfg, progress)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close(ctx)) }()
	r := s.r
	failed := 0
	total := len(r.cfg.Suite.Tests) * r.cfg.Repeat
	n := 0
	for rep := 1; rep <= r.cfg.Repeat; rep++ {
		for i, spec := range r.cfg.Suite.Tests {
			n++
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res := s.Test(ctx, spec, TestOptions{Index: i + 1, Repeat: rep, N: n, Total: total})
			if ctx.Err() != nil && res.Status != "ok" {
				// The test the signal cut is kept, failed and marked, so
				// that the copies and the history say the run was stopped
				// part way, and where.
				res.Notes = append(res.Notes, result.NoteInterrupted)
				if err := emit(res); err != nil {
					return errors.Join(ctx.Err(), fmt.Errorf("saving result of %s: %w", spec.Name, err))
				}
				return ctx.Err()
			}
			if res.Status != "ok" {
				failed++
			}
			if err := emit(res); err != nil {
				return fmt.Errorf("saving result of %s: %w", spec.Name, err)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	if failed > 0 {
		return &TestsFailedError{Failed: failed, Total: total}
	}
	return nil
}

// Session is a prepared target on which tests run one at a time: Run's
// fixed suites and the adaptive plans that decide the next test from the
// last result both use it. Close removes everything it created.
type Session struct {
	r       *runner
	cleanup func(context.Context) error
}

// Open checks fio, prepares the target (a scratch directory with the
// shared test file written once, or a device) and returns the session.
// cfg.Suite lists the tests that may run (it sizes the scratch space and
// the ETA); a plan may run others of the same kinds.
func Open(ctx context.Context, cfg Config, progress func(Event)) (_ *Session, err error) {
	if progress == nil {
		progress = func(Event) {}
	}
	if cfg.Repeat < 1 {
		cfg.Repeat = 1
	}
	if cfg.SampleInterval > 0 {
		cfg.SampleInterval = max(cfg.SampleInterval.Round(time.Millisecond), 100*time.Millisecond)
	}
	if cfg.FioBinary == "" {
		cfg.FioBinary = "fio"
	}
	// fio runs in the scratch directory: a relative device path there
	// would name a new file, measured instead of the device.
	if cfg.Device != "" && !filepath.IsAbs(cfg.Device) {
		abs, err := filepath.Abs(cfg.Device)
		if err != nil {
			return nil, err
		}
		cfg.Device = abs
	}
	if cfg.RunID == "" {
		cfg.RunID = NewRunID()
	}
	if cfg.WritebackCap == 0 {
		cfg.WritebackCap = DefaultWritebackCap
	}
	// Whatever built the suite (a job file, a built-in, a caller's own
	// specs), nothing reaches fio that CheckSpec has not passed; Test
	// checks the tests a plan adds.
	if err := checkSuite(cfg.Suite); err != nil {
		return nil, err
	}
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, progress: progress, start: time.Now()}
	if r.fioVersion, err = fio.Version(ctx, cfg.FioBinary); err != nil {
		return nil, err
	}
	r.engine = pickEngine(ctx, cfg.FioBinary)
	r.host = hostInfo(cfg.ProcRoot, r.fioVersion, cfg.IolensVersion)
	s := &Session{r: r}
	s.cleanup, err = r.prepareTarget(ctx)
	if err == nil {
		timed, open := r.plan()
		// The ETA guesses 10 s for a test that stops at its size.
		r.planned = timed + time.Duration(open*cfg.Repeat)*10*time.Second
		if n := len(cfg.Suite.Tests); n > 0 && r.planned > 0 && !cfg.Plan {
			msg := fmt.Sprintf("%d tests x %d: about %s of IO after the test file is written", n, cfg.Repeat, timed.Round(time.Second))
			// The time of a test that stops at its size depends on the
			// disk: say its bound, not a guess.
			switch {
			case open > 0 && timed == 0:
				msg = fmt.Sprintf("%d tests x %d, each stopping at its size, within %s (--runtime bounds them)",
					n, cfg.Repeat, units.FormatSeconds(noRuntimeBound.Seconds()))
			case open > 0:
				msg += fmt.Sprintf(", and %d stopping at its size within %s (--runtime bounds them)",
					open, units.FormatSeconds(noRuntimeBound.Seconds()))
			}
			if n := r.bufferedWrites(); n > 0 && cfg.WritebackCap > 0 {
				msg += fmt.Sprintf("; after each of the %d buffered write tests, up to %s watching the writeback (--writeback-cap)",
					n, units.FormatSeconds(cfg.WritebackCap.Seconds()))
			}
			progress(Event{Kind: EventInfo, Message: msg})
		}
		if r.sharedFile != "" && !cfg.NoPrecondition {
			err = r.precondition(ctx)
		}
	}
	if err != nil {
		return nil, errors.Join(err, s.Close(ctx))
	}
	return s, nil
}

// TestOptions place a test in its run.
type TestOptions struct {
	// Index is the test's 1-based position in the suite or plan, Repeat
	// its repetition; N of Total is its place in the whole run, for
	// progress (0 of 0 when a plan does not know yet).
	Index, Repeat, N, Total int
	// Stop may end a time-based test early (it overrides Config.Stop).
	Stop StopRule
}

// Test runs one test and always returns its result, failed or not. The
// run's overrides (runtime, ramp, engine) apply to spec first.
func (s *Session) Test(ctx context.Context, spec result.TestSpec, o TestOptions) result.Result {
	r := s.r
	var res result.Result
	if err := CheckSpec(spec); err != nil {
		res = result.Result{Schema: result.Schema, RunID: r.cfg.RunID, Suite: r.cfg.Suite.Name, Index: o.Index, Repeat: max(o.Repeat, 1),
			Test: spec, Target: r.target, Host: r.host, FioVersion: r.fioVersion, Status: "failed", Error: err.Error()}
		res.Start = time.Now().UTC()
		res.End = res.Start
	} else {
		spec = r.effective(spec)
		since, counts := kernlog.Now(), r.ioErrCounts()
		res = r.runTest(ctx, spec, o.Index, max(o.Repeat, 1), o.N, o.Total, o.Stop)
		if res.IOFailed() {
			res.Notes = append(res.Notes, r.kernelRecord(since, counts)...)
		}
	}
	r.progress(Event{Kind: EventTestEnd, Index: o.N, Total: o.Total, Repeat: o.Repeat, Test: spec, Elapsed: time.Since(r.start), Result: &res})
	return res
}

// ioErrCounts are the SCSI error counts of the target's devices that
// have one.
func (r *runner) ioErrCounts() map[string]uint64 {
	fs := kernlog.FS{Sys: r.cfg.SysRoot}
	out := map[string]uint64{}
	for _, d := range r.target.Devices {
		if n, ok := fs.IOErrCount(d); ok {
			out[d] = n
		}
	}
	return out
}

// kernelRecord is the kernel's own record of a test's IO errors, as
// result notes: its log's lines on the target's devices since the test
// began, and the SCSI error counts that grew. Nothing where the host
// does not show them.
func (r *runner) kernelRecord(since uint64, before map[string]uint64) []string {
	var notes []string
	if l, err := (kernlog.FS{Dev: r.cfg.DevRoot, Sys: r.cfg.SysRoot}).Errors(r.target.Devices, since); err == nil {
		for _, line := range l.Lines {
			notes = append(notes, result.NoteKernel+line)
		}
		if l.Count > len(l.Lines) {
			notes = append(notes, fmt.Sprintf("%s%d more lines on %s in the kernel log", result.NoteKernel, l.Count-len(l.Lines), strings.Join(r.target.Devices, ", ")))
		}
	}
	after := r.ioErrCounts()
	for _, d := range r.target.Devices {
		if n, b := after[d], before[d]; n > b {
			notes = append(notes, fmt.Sprintf("%s%s counted %d failed commands during the test (ioerr_cnt %d)", result.NoteKernel, d, n-b, n))
		}
	}
	return notes
}

// Target describes what the session measures.
func (s *Session) Target() result.Target { return s.r.target }

// Close removes everything the session created. It runs even after ctx
// is cancelled (Ctrl-C), with its own deadline.
func (s *Session) Close(ctx context.Context) error {
	if s.cleanup == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	err := s.cleanup(cctx)
	s.cleanup = nil
	return err
}

// effective applies the run's overrides to a test. What it changes in a
// test's own parameters is said in the test's notes.
func (r *runner) effective(s result.TestSpec) result.TestSpec {
	s.Options = append([]result.Option(nil), s.Options...)
	s.Notes = append([]string(nil), s.Notes...)
	// --size scales every test down; a shared file (or device) bounds
	// the tests that use it.
	if limit, why := r.sizeLimit(s); s.SizeBytes > 0 && limit > 0 && s.SizeBytes > limit {
		s.Notes = append(s.Notes, fmt.Sprintf("size scaled down from %s to %s (%s): results can differ from a full-size run",
			units.HumanBytes(float64(s.SizeBytes)), units.HumanBytes(float64(limit)), why))
		s.SizeBytes = limit
	}
	for i, o := range s.Options {
		if o.Key != "cpus_allowed" {
			continue
		}
		if missing := unavailableCPUs(o.Value); missing != "" {
			s.Notes = append(s.Notes, fmt.Sprintf("cpus_allowed=%s not applied: CPU %s is not available to fio here", o.Value, missing))
			s.Options = append(s.Options[:i], s.Options[i+1:]...)
		}
		break
	}
	// --runtime bounds every test: a time-based one runs that long, one
	// that stops at its size stops there or at --runtime, whichever
	// comes first (else it would have the hour of NoRuntimeBound).
	if r.cfg.RuntimeS > 0 {
		if s.RuntimeS == 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("stops at its size or after --runtime %s, whichever comes first", units.FormatSeconds(r.cfg.RuntimeS)))
		}
		s.RuntimeS = r.cfg.RuntimeS
	}
	if think, delay := waits(s); think+delay > 0 && think+delay < bound(s) {
		s.Notes = append(s.Notes, fmt.Sprintf("fio was given a runtime of %s: startdelay and thinktime count against the test's %s",
			units.FormatSeconds(fioRuntime(s).Seconds()), units.FormatSeconds(bound(s).Seconds())))
	}
	if r.cfg.RampSet {
		s.RampS = r.cfg.RampS
	}
	if r.cfg.Stop != nil && s.RuntimeS > 0 && r.cfg.MaxRuntimeS > 0 {
		s.RuntimeS = r.cfg.MaxRuntimeS
	}
	if s.IOEngine == "libaio" && r.engine != "libaio" {
		s.IOEngine = r.engine
	}
	if s.NumJobs < 1 {
		s.NumJobs = 1
	}
	if s.IODepth < 1 {
		s.IODepth = 1
	}
	return s
}

// sizeLimit is the largest size a test may use: --size scales every
// test down. Nothing else does: a test larger than its file or device is
// refused (region), since a smaller one would measure something else.
func (r *runner) sizeLimit(result.TestSpec) (int64, string) {
	if r.cfg.SizeBytes > 0 {
		return r.cfg.SizeBytes, "set with --size"
	}
	return 0, ""
}

// unavailableCPUs names the first CPU of a cpus_allowed list that this
// process may not run on, or returns "".
func unavailableCPUs(list string) string {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return ""
	}
	for _, c := range cpusOf(list) {
		if !set.IsSet(c) {
			return strconv.Itoa(c)
		}
	}
	return ""
}

// DefaultWritebackCap is how long iolens watches the writeback after a
// buffered test at most. The 2019 AKS write-up's random buffered writes
// took 4-5 minutes to drain.
const DefaultWritebackCap = 15 * time.Minute

// checkConfig refuses run settings that are not finite, negative or out
// of range, whoever filled them in (flags, the Kubernetes agent).
func checkConfig(c Config) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"runtime", c.RuntimeS}, {"ramp", c.RampS}, {"max-runtime", c.MaxRuntimeS}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || f.v > maxTestTime.Seconds() {
			return &units.ValueError{Kind: "duration", Value: strconv.FormatFloat(f.v, 'g', -1, 64), Why: "--" + f.name + " out of range",
				Want: fmt.Sprintf("seconds from 0 to %.0f", maxTestTime.Seconds())}
		}
	}
	if c.SizeBytes < 0 {
		return &units.ValueError{Kind: "size", Value: strconv.FormatInt(c.SizeBytes, 10), Why: "negative", Want: "a size of 0 or more"}
	}
	if c.Repeat > 10000 {
		return &units.ValueError{Kind: "count", Value: strconv.Itoa(c.Repeat), Why: "out of range", Want: "a whole number from 1 to 10000"}
	}
	return nil
}

// bufferedWrites counts the suite's tests after which the writeback is
// watched (runTest's buffered).
func (r *runner) bufferedWrites() int {
	n := 0
	for _, s := range r.cfg.Suite.Tests {
		s = r.effective(s)
		if !s.Direct && s.Writes() && s.Fdatasync == 0 {
			n++
		}
	}
	return n
}

// plan is the run's duration at most, for the announcement and the ETA:
// timed, the ramp and runtime of each test that has a runtime (its waits
// count against it), over every repeat; and open, the tests with none,
// which stop at their size within NoRuntimeBound.
func (r *runner) plan() (timed time.Duration, open int) {
	for _, s := range r.cfg.Suite.Tests {
		s = r.effective(s)
		if s.RuntimeS == 0 {
			open++
			continue
		}
		// A test that stops at its size may end sooner than its
		// runtime; the runtime is the upper bound.
		timed += s.Runtime() + s.Ramp() + time.Second
	}
	return timed * time.Duration(r.cfg.Repeat), open
}

// pickEngine prefers libaio, then io_uring, then posixaio; psync, which
// cannot queue, is the last resort.
func pickEngine(ctx context.Context, bin string) string {
	for _, e := range []string{"libaio", "io_uring", "posixaio"} {
		if exec.CommandContext(ctx, bin, "--enghelp="+e).Run() == nil {
			return e
		}
	}
	return "psync"
}

func hostInfo(procRoot, fioVersion, version string) result.Host {
	h := result.Host{CPUs: runtime.NumCPU(), FioVersion: fioVersion, IolensVersion: version}
	h.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	if procRoot == "" {
		procRoot = "/proc"
	}
	if fs, err := procfs.NewFS(procRoot); err == nil {
		if mi, err := fs.Meminfo(); err == nil && mi.MemTotal != nil {
			h.MemTotalBytes = *mi.MemTotal * 1024
		}
	}
	return h
}

// prepareTarget creates the scratch directory (or checks the device),
// picks the file size, checks that every test fits, and finds the devices
// to sample. The returned cleanup removes everything iolens created.
func (r *runner) prepareTarget(ctx context.Context) (func(context.Context) error, error) {
	cfg := r.cfg
	resolver := diskstats.Resolver{ProcRoot: cfg.ProcRoot, SysRoot: cfg.SysRoot}
	// Own-file tests remove their file when they end, so they need the
	// largest of their extents, not the sum. Shared tests that fix a size
	// (the seed suites, a job file's sections that name a file) size the
	// shared file. A plan (no tests listed up front) may run anything: it
	// gets the shared file.
	var ownMax, sharedWant int64
	shared := len(cfg.Suite.Tests) == 0
	writes := false
	for _, s := range cfg.Suite.Tests {
		s = r.effective(s)
		if s.OwnFile {
			if s.SizeBytes > 0 {
				ownMax = max(ownMax, fixedExtent(s))
			} else {
				ownMax = max(ownMax, cfg.SizeBytes)
			}
		} else {
			shared = true
			if s.SizeBytes > 0 {
				sharedWant = max(sharedWant, fixedExtent(s))
			}
		}
		writes = writes || s.Writes()
	}
	r.target = result.Target{Labels: cfg.Labels, Emulated: cfg.Emulated}

	if cfg.Device != "" {
		lease, err := checkDevice(ctx, DeviceCheck{Device: cfg.Device, Writes: writes, Destructive: cfg.Destructive, Force: cfg.Force,
			Inspector: DeviceInspector{ProcRoot: cfg.ProcRoot, SysRoot: cfg.SysRoot}})
		if err != nil {
			return nil, err
		}
		r.lease, r.readOnly = lease, lease.ReadOnly
		if lease.Note != "" {
			r.progress(Event{Kind: EventInfo, Message: lease.Note})
		}
		release := func(context.Context) error { return lease.Release() }
		size, err := deviceSize(cfg.Device)
		if err != nil {
			return release, err
		}
		reason := "the whole device"
		switch {
		case cfg.SizeBytes > size:
			return release, &hint.Error{Err: fmt.Errorf("--size %s is larger than %s (%s)", units.HumanBytes(float64(cfg.SizeBytes)), cfg.Device, units.HumanBytes(float64(size))),
				Advice: "give a --size up to the device's size, or leave it out to use the whole device"}
		case cfg.SizeBytes > 0 && cfg.SizeBytes < size:
			size, reason = cfg.SizeBytes, "set with --size"
		}
		r.target.Kind, r.target.Path, r.target.SizeBytes, r.target.SizeReason = "device", cfg.Device, size, reason
		r.owned = size
		r.sharedFile = cfg.Device
		r.res, err = resolver.Resolve(cfg.Device)
		if err != nil {
			return release, err
		}
		r.fillDevices()
		// Every test runs on the device: the scratch directory holds
		// only fio's job files and logs.
		dir, err := os.MkdirTemp("", "iolens-"+cfg.RunID+"-")
		if err != nil {
			return release, err
		}
		r.scratch = dir
		cleanup := func(ctx context.Context) error { return errors.Join(os.RemoveAll(dir), release(ctx)) }
		if err := r.vetSuite(); err != nil {
			return cleanup, err
		}
		return cleanup, r.openReader()
	}

	dir, created, err := targetDir(cfg.Dir, cfg.Create)
	if err != nil {
		return nil, err
	}
	removeCreated := func() error { return removeDirs(created) }
	scratch, err := os.MkdirTemp(dir, "iolens-"+cfg.RunID+"-")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("creating scratch directory in %s: %w", dir, err), removeCreated())
	}
	r.scratch = scratch
	cleanup := func(context.Context) error {
		return errors.Join(os.RemoveAll(scratch), removeCreated())
	}
	sp, err := freeSpace(scratch)
	if err != nil {
		return cleanup, err
	}
	abs := dir
	size := cfg.SizeBytes
	reason := ""
	switch {
	case shared && cfg.SizeBytes == 0 && sharedWant > 0:
		size, reason, err = chooseSuiteSize(sharedWant, sp, ownMax, abs)
	case shared || cfg.SizeBytes == 0:
		size, reason, err = chooseSize(cfg.SizeBytes, sp, ownMax, abs)
	default:
		if ownMax > sp.FreeBytes-reserve {
			err = &SpaceError{Path: abs, Need: ownMax, FreeBytes: sp.FreeBytes}
		}
	}
	if err != nil {
		return cleanup, err
	}
	r.target.Kind, r.target.Path, r.target.SizeBytes, r.target.SizeReason = "dir", abs, size, reason
	if shared {
		r.sharedFile = filepath.Join(scratch, "iolens.dat")
	}
	if err := r.vetSuite(); err != nil {
		return cleanup, err
	}
	if r.res, err = resolver.Resolve(scratch); err != nil {
		return cleanup, err
	}
	r.target.Filesystem = r.res.Mount.FSType
	r.target.MountOptions = r.res.Mount.Options
	r.fillDevices()
	if others := resolver.OtherDisks(r.res); len(others) > 0 && onRootFS(scratch) && r.target.Device != "" {
		r.target.RootDisk, r.target.OtherDisks = true, others
		r.progress(Event{Kind: EventInfo, Message: rootDiskNote(abs, r.target.Device, others)})
	}
	switch fs := r.res.Mount.FSType; {
	case r.target.Device != "":
	case fs == "nfs" || fs == "nfs4":
		r.progress(Event{Kind: EventInfo, Message: fmt.Sprintf("%s is on NFS: the client's own statistics (operations, round trip, retransmissions) stand in for a device series; the share's limits are the server's and the VM's network", abs)})
	default:
		r.progress(Event{Kind: EventInfo, Message: fmt.Sprintf("no block device backs %s (%s): there is no device-side series, and results may measure memory or a network", abs, fs)})
	}
	return cleanup, r.openReader()
}

// fixedExtent is how far a test that sets its own size reaches into its
// file: region's end, before the file is known.
func fixedExtent(s result.TestSpec) int64 {
	off, inc := optInt(s, "offset"), optInt(s, "offset_increment")
	end := addSat(addSat(addSat(off, optInt(s, "offset_align")), mulSat(inc, int64(max(s.NumJobs, 1))-1)), s.SizeBytes)
	return max(end, optInt(s, "filesize"))
}

// vetSuite places every test of the suite before anything is written, so
// that a test that does not fit is refused before the first one runs.
func (r *runner) vetSuite() error {
	for _, s := range r.cfg.Suite.Tests {
		if err := r.vet(r.effective(s)); err != nil {
			return err
		}
	}
	return nil
}

// vet checks a test as it will run (after effective): its fields and
// options, its waits against its runtime, and its region.
func (r *runner) vet(s result.TestSpec) error {
	if err := CheckSpec(s); err != nil {
		return err
	}
	_, err := r.region(s)
	return err
}

func (r *runner) fillDevices() {
	r.target.Device = r.res.Primary()
	r.target.Devices = r.res.Names()
}

func (r *runner) openReader() error {
	var err error
	r.reader, err = diskstats.NewReader(r.cfg.ProcRoot, r.cfg.SysRoot, r.res.Names())
	return err
}

// precondition writes the shared file once, so reads hit written blocks
// and writes overwrite allocated ones, as on a disk in use.
func (r *runner) precondition(ctx context.Context) error {
	if r.cfg.Device != "" {
		return nil // a device is tested as it is; writing it needs its own decision
	}
	r.progress(Event{Kind: EventPrepare, Message: fmt.Sprintf("writing the %s test file once (preconditioning; size: %s)", units.HumanBytes(float64(r.target.SizeBytes)), r.target.SizeReason)})
	jf := fio.JobFile{Jobs: []fio.Section{{Name: "precondition", Options: []fio.KV{
		{Key: "filename", Value: r.sharedFile}, {Key: "size", Value: strconv.FormatInt(r.target.SizeBytes, 10)},
		{Key: "rw", Value: "write"}, {Key: "bs", Value: "1M"}, {Key: "direct", Value: "1"},
		{Key: "ioengine", Value: r.engine}, {Key: "iodepth", Value: "8"}, {Key: "refill_buffers", Value: "1"},
	}}}}
	path := filepath.Join(r.scratch, "precondition.fio")
	if err := os.WriteFile(path, []byte(jf.String()), 0o644); err != nil {
		return err
	}
	// Progress: bytes written so far, the rate, and what is left.
	spec := result.TestSpec{Name: "preconditioning", RW: "write", BlockSize: 1 << 20, IODepth: 8}
	start := time.Now()
	total := float64(r.target.SizeBytes)
	onStatus := func(o *fio.Output) {
		var done float64
		for _, j := range o.AllJobs() {
			done += float64(j.Write.IOBytes)
		}
		el := time.Since(start)
		rate := done / math.Max(el.Seconds(), 1e-3)
		eta := time.Duration(0)
		if rate > 0 && done < total {
			eta = time.Duration((total - done) / rate * float64(time.Second))
		}
		r.progress(Event{Kind: EventStatus, Test: spec, Elapsed: time.Since(r.start), ETA: eta, BWBytes: rate,
			Message: fmt.Sprintf("%s of %s written, %s, about %s left", units.HumanBytes(done), units.HumanBytes(total), units.MBps(rate), eta.Round(time.Second))})
	}
	// The layout is bounded like a test: at the slowest rate a working
	// disk writes, and a margin.
	bnd := time.Duration(total/slowRate*float64(time.Second)) + 2*time.Minute
	if r.cfg.BoundMargin > 0 {
		bnd = time.Duration(total/slowRate*float64(time.Second)) + r.cfg.BoundMargin
	}
	pctx, cancel := context.WithTimeout(ctx, bnd)
	defer cancel()
	run, err := fio.Command{Binary: r.cfg.FioBinary, Prefix: r.cfg.CommandPrefix, Args: []string{"--output-format=json", "--status-interval=1", path},
		Dir: r.scratch, OnStatus: onStatus, GracePeriod: r.grace()}.Exec(pctx)
	if err == nil && pctx.Err() != nil && ctx.Err() == nil {
		err = pctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if pctx.Err() != nil {
			return &BoundError{Test: "preconditioning (the layout of the test file)", Bound: bnd, Killed: run != nil && run.ExitCode == 128+int(unix.SIGKILL)}
		}
		return fmt.Errorf("preconditioning the test file: %w", explainFioError(err, run))
	}
	r.progress(Event{Kind: EventPrepare, Message: fmt.Sprintf("test file written in %s (%s)", time.Since(start).Round(100*time.Millisecond),
		units.MBps(total/math.Max(time.Since(start).Seconds(), 1e-3)))})
	if jobs := run.Final.AllJobs(); len(jobs) > 0 && jobs[0].Error != 0 {
		return fmt.Errorf("preconditioning the test file: fio job error %d (%s)", jobs[0].Error, unix.ErrnoName(unix.Errno(jobs[0].Error)))
	}
	r.target.Preconditioned = true
	return nil
}

func explainFioError(err error, run *fio.Run) error {
	if run != nil && strings.Contains(run.Stderr, "does not support direct") {
		return &hint.Error{Err: err, Advice: "the file system refused O_DIRECT; test a directory on a block-device file system, or use --job with direct=0 (results then include the page cache)"}
	}
	return err
}

// jobFile renders one test as a fio job file.
// interval is the sampling period of test s.
func (r *runner) interval(s result.TestSpec) time.Duration {
	switch {
	case r.cfg.SampleInterval > 0:
		return r.cfg.SampleInterval
	case s.RuntimeS > 60:
		return time.Second
	}
	return 250 * time.Millisecond
}

// jobFile renders test s (after effective) as a fio job file: the
// typed fields and the region in the global section, the test's own
// options, each with its value, in the job's section, so that they win.
func (r *runner) jobFile(s result.TestSpec, logPrefix string) (fio.JobFile, error) {
	reg, err := r.region(s)
	if err != nil {
		return fio.JobFile{}, err
	}
	kv := func(k string, v any) fio.KV { return fio.KV{Key: k, Value: fmt.Sprint(v)} }
	g := []fio.KV{
		kv("filename", reg.file),
		kv("rw", s.RW), kv("bs", s.BlockSize), kv("iodepth", s.IODepth),
		kv("ioengine", s.IOEngine), kv("direct", b2i(s.Direct)),
	}
	if s.NumJobs > 1 {
		g = append(g, kv("numjobs", s.NumJobs))
	}
	if reg.inc > 0 {
		// Each job gets its own region of the shared file.
		g = append(g, kv("offset_increment", reg.inc))
	}
	g = append(g, kv("size", reg.size))
	if s.Mixed() || s.RWMixRead > 0 {
		g = append(g, kv("rwmixread", s.RWMixRead))
	}
	if s.Fdatasync > 0 {
		g = append(g, kv("fdatasync", s.Fdatasync))
	}
	// Without time_based, fio stops at size or runtime, whichever
	// comes first. A test without a runtime gets the bound.
	if s.TimeBased() {
		g = append(g, fio.KV{Key: "time_based"})
	}
	g = append(g, kv("runtime", formatFioTime(fioRuntime(s), time.Second)))
	if s.RampS > 0 {
		g = append(g, kv("ramp_time", formatFioTime(s.Ramp(), time.Second)))
	}
	if s.Writes() && r.cfg.Incompressible {
		// Fresh random data for every write, so compressing storage sees
		// nothing it can shrink. It costs fio CPU (about 35% of a core at
		// 1.3 GB/s here), which is why it is not the default: fio's own
		// buffers are random already (never zero pages), scrambled per IO,
		// and defeat 4 KiB deduplication.
		g = append(g, kv("refill_buffers", 1))
	}
	g = append(g,
		kv("randrepeat", 0), kv("group_reporting", 1), kv("unlink", 0),
		kv("lat_percentiles", 1), kv("clat_percentiles", 1),
		kv("percentile_list", "1:5:10:25:50:75:90:95:99:99.5:99.9:99.99"),
		kv("write_bw_log", logPrefix), kv("write_iops_log", logPrefix), kv("write_lat_log", logPrefix),
		kv("log_avg_msec", r.interval(s).Milliseconds()),
	)
	var sec []fio.KV
	for _, o := range s.Options {
		sec = append(sec, fio.KV{Key: o.Key, Value: o.Value})
	}
	return fio.JobFile{Global: g, Jobs: []fio.Section{{Name: safeName(s.Name), Options: sec}}}, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func safeName(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// runTest runs one test and always returns a result, failed or not.
func (r *runner) runTest(ctx context.Context, s result.TestSpec, index, rep, n, total int, stop StopRule) result.Result {
	res := result.Result{Schema: result.Schema, RunID: r.cfg.RunID, Suite: r.cfg.Suite.Name, Index: index, Repeat: rep,
		Test: s, Target: r.target, Host: r.host, FioVersion: r.fioVersion, Status: "ok"}
	// How the test was derived (a job file's filename not used, a size
	// scaled down) is said once, in the result's notes.
	res.Notes, res.Test.Notes = append(res.Notes, s.Notes...), nil
	res.Start = time.Now().UTC()
	fail := func(err error) result.Result {
		res.Status, res.Error = "failed", err.Error()
		res.End = time.Now().UTC()
		return res
	}
	r.progress(Event{Kind: EventTestStart, Index: n, Total: total, Repeat: rep, Test: s, Elapsed: time.Since(r.start), ETA: r.eta()})

	logDir := filepath.Join(r.scratch, fmt.Sprintf("logs-%d-%d", index, rep))
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return fail(err)
	}
	defer os.RemoveAll(logDir)
	if err := r.vet(s); err != nil {
		return fail(err)
	}
	reg, err := r.region(s)
	if err != nil {
		return fail(err)
	}
	if err := r.spaceFor(s, reg); err != nil {
		return fail(err)
	}
	if r.readOnly && s.Writes() {
		return fail(&DeviceRefusal{Device: r.cfg.Device, Reason: "it is in use, so only reads run",
			hint: "unmount it, remove what is stacked on it, or swapoff it first"})
	}
	if r.ownsFile(s) {
		// The target is what this test measured: its own file, or its
		// own region of the device, not the shared file.
		res.Target.SizeBytes, res.Target.Preconditioned = reg.end, false
		res.Target.SizeReason = "the test's own " + units.HumanBytes(float64(reg.end)) + " file in " + r.target.Path
		if r.cfg.Device != "" {
			res.Target.SizeReason = "the test's own region of " + r.cfg.Device + ": its first " + units.HumanBytes(float64(reg.end))
		}
	}
	if reg.own {
		// An own file is this test's alone: removing it when the test
		// ends keeps the space a suite needs to its largest test.
		defer os.Remove(reg.file)
	}
	jf, err := r.jobFile(s, filepath.Join(logDir, "t"))
	if err != nil {
		return fail(err)
	}
	res.FioJob = jf.String()
	jobPath := filepath.Join(logDir, "job.fio")
	if err := os.WriteFile(jobPath, []byte(res.FioJob), 0o644); err != nil {
		return fail(err)
	}
	args := []string{"--output-format=json+", fmt.Sprintf("--status-interval=%dms", r.interval(s).Milliseconds())}
	if r.fileReady(s, reg) && !s.Writes() {
		// fio's own guard: it refuses any write or trim of this job.
		args = append(args, "--readonly")
	}
	args = append(args, jobPath)
	res.FioArgs = append([]string{"fio"}, args...)
	buffered := !s.Direct && s.Writes() && s.Fdatasync == 0
	var dirtyBefore uint64
	if buffered {
		// Start buffered writes from a clean page cache, so the writeback
		// seen afterwards is this test's.
		unix.Sync()
		if r.reader != nil {
			if snap, err := r.reader.Snapshot(time.Now()); err == nil {
				dirtyBefore = snap.DirtyBytes + snap.WritebackBytes
			}
		}
	}

	// Device sampling runs for the whole test, and after it while
	// buffered writes drain.
	var mu sync.Mutex
	var ticks []diskstats.Tick
	sctx, stopSampling := context.WithCancel(ctx)
	var swg sync.WaitGroup
	var sampleErr error
	if r.reader != nil {
		swg.Add(1)
		go func() {
			defer swg.Done()
			err := r.reader.Sample(sctx, r.interval(s), func(t diskstats.Tick) {
				mu.Lock()
				ticks = append(ticks, t)
				mu.Unlock()
			})
			mu.Lock()
			sampleErr = errors.Join(sampleErr, err)
			mu.Unlock()
		}()
	}

	// On a network file system the client's own statistics stand in for
	// the block device's.
	var client []nfsstats.Rates
	if m := r.res.Mount; m.FSType == "nfs" || m.FSType == "nfs4" {
		swg.Add(1)
		go func() {
			defer swg.Done()
			err := nfsstats.Reader{ProcRoot: r.cfg.ProcRoot}.Sample(sctx, m.MountPoint, r.interval(s), func(rt nfsstats.Rates) {
				mu.Lock()
				client = append(client, rt)
				mu.Unlock()
			})
			if err != nil {
				mu.Lock()
				sampleErr = errors.Join(sampleErr, fmt.Errorf("NFS client statistics: %w", err))
				mu.Unlock()
			}
		}()
	}

	tctx, stopTest := context.WithCancel(ctx)
	defer stopTest()
	var prev *fio.Output
	if stop == nil && r.cfg.Stop != nil && s.RuntimeS > 0 {
		stop = r.cfg.Stop(s)
	}
	stoppedAt, stoppedWhy := -1.0, ""
	onStatus := func(o *fio.Output) {
		iops, bw, ms := intervalRates(prev, o)
		prev = o
		if ms <= 0 {
			return
		}
		r.progress(Event{Kind: EventStatus, Index: n, Total: total, Repeat: rep, Test: s, Elapsed: time.Since(r.start), ETA: r.eta(), IOPS: iops, BWBytes: bw})
		if stop != nil && stoppedAt < 0 {
			measured := float64(jobRuntimeMs(o)) / 1000
			mi, mb, _ := intervalRates(nil, o)
			st := Status{Elapsed: measured, Interval: r.interval(s).Seconds(), IOPS: iops, BWBytes: bw, MeanIOPS: mi, MeanBWBytes: mb, Out: o}
			if ok, why := stop(st); ok {
				stoppedAt, stoppedWhy = measured, why
				stopTest()
			}
		}
	}
	// fio's stderr is shown as it comes (warnings are not failures; the
	// exit status and the JSON error fields are the signal).
	stderr := &lineWriter{fn: func(line string) {
		if !strings.HasPrefix(line, "fio: ") {
			line = "fio: " + line
		}
		r.progress(Event{Kind: EventInfo, Index: n, Total: total, Test: s, Message: line})
	}}
	// The bound: fio is stopped (SIGINT, then SIGKILL) once the test has
	// run past its runtime, ramp, waits and a margin.
	bnd := r.boundOf(s, reg)
	var overran atomic.Bool
	watchdog := time.AfterFunc(bnd, func() {
		overran.Store(true)
		stopTest()
	})
	run, err := fio.Command{Binary: r.cfg.FioBinary, Prefix: r.cfg.CommandPrefix, Args: args, Dir: r.scratch, OnStatus: onStatus, Stderr: stderr,
		GracePeriod: r.grace()}.Exec(tctx)
	watchdog.Stop()
	stderr.flush()
	fioEnd := time.Now()
	if run != nil {
		res.FioStderr = run.Stderr
		if len(run.Diagnostics) > 0 {
			res.FioStderr += strings.Join(run.Diagnostics, "\n")
		}
	}
	// Buffered writes go on reaching the disk after fio ends: watch the
	// tail until the device calms down.
	var wb writebackEnd
	if err == nil && buffered && r.reader != nil && r.cfg.WritebackCap > 0 {
		var wrote float64
		if run != nil && run.Final != nil {
			for _, j := range run.Final.Jobs {
				wrote += float64(j.Write.IOBytes)
			}
		}
		wb = r.waitWriteback(ctx, r.interval(s), &mu, &ticks, fioEnd, dirtyBefore, wrote, func(msg string) {
			r.progress(Event{Kind: EventInfo, Index: n, Total: total, Test: s, Message: msg})
		})
	}
	stopSampling()
	swg.Wait()
	tailFrom := countBefore(ticks, fioEnd)
	res.End = time.Now().UTC()
	r.done += s.Runtime() + s.Ramp()

	if overran.Load() && ctx.Err() == nil {
		return fail(&BoundError{Test: s.Name, Bound: bnd, Killed: run != nil && run.ExitCode == 128+int(unix.SIGKILL)})
	}
	if err != nil && !(stoppedAt >= 0 && ctx.Err() == nil && run != nil && run.Final != nil) {
		if ctx.Err() != nil {
			return fail(fmt.Errorf("interrupted: %w", ctx.Err()))
		}
		// fio's JSON names the failing job and its errno; its stderr says
		// what it was doing. Together they beat the bare exit status.
		if run != nil && run.Final != nil {
			if jerr := jobError(run.Final.AllJobs(), res.FioStderr); jerr != nil {
				return fail(jerr)
			}
		}
		return fail(explainFioError(err, run))
	}
	if err := r.fill(&res, run.Final, logDir); err != nil {
		return fail(err)
	}
	// A test in which fio did no IO measured nothing, whatever fio's
	// exit status says.
	if didNoIO(&res) {
		return fail(&NoIOError{Test: s.Name, Stderr: stderrTail(res.FioStderr)})
	}
	// fio counts the IO of the ramp but measures none of it: a test that
	// was done before its ramp ended has bytes and no measurement.
	if s.RampS > 0 && allInRamp(&res) {
		return fail(&RampError{Test: s.Name, RampS: s.RampS})
	}
	measureStart := time.UnixMilli(run.Final.TimestampMs - maxRuntimeMs(run.Final))
	res.Devices, res.System = r.deviceSeries(ticks[:tailFrom], measureStart)
	res.Tail, _ = r.deviceSeries(ticks[tailFrom:], measureStart)
	for _, c := range client {
		res.Client = append(res.Client, c.Sample(round3(c.At.Sub(measureStart).Seconds())))
	}
	if sampleErr != nil {
		res.Notes = append(res.Notes, "device sampling stopped early: "+sampleErr.Error())
	}
	if stoppedAt >= 0 {
		what := "at steady state"
		if stoppedWhy != "" {
			what = stoppedWhy
		}
		limit := fmt.Sprintf("limit %.0f s", s.RuntimeS)
		if s.RuntimeS == 0 {
			limit = "size-based"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("ended early after %.1f s (%s): %s", stoppedAt, limit, what))
	}
	if s.RuntimeS == 0 && float64(maxRuntimeMs(run.Final)) >= noRuntimeBound.Seconds()*1000-1000 {
		res.Notes = append(res.Notes, fmt.Sprintf("stopped after %s, the bound iolens gives a test without a runtime, before its size was done",
			units.FormatSeconds(noRuntimeBound.Seconds())))
	}
	if s.IOEngine == "null" {
		res.Notes = append(res.Notes, "ioengine=null: fio moved no data to or from any disk, so no disk was measured; the figures are fio's own overhead")
	}
	if buffered {
		res.Notes = append(res.Notes, "buffered writes: fio's figures include the page cache; the device series shows what reached the disk")
		if note := wb.note(r.cfg.WritebackCap); note != "" {
			res.Notes = append(res.Notes, note)
		}
	}
	if r.target.Device == "" {
		res.Notes = append(res.Notes, "no block device behind the target ("+r.target.Filesystem+")")
	}
	return res
}

// grace is how long fio gets to write its report after iolens stops it.
func (r *runner) grace() time.Duration {
	if r.cfg.BoundMargin > 0 {
		return min(r.cfg.BoundMargin, 15*time.Second)
	}
	return 15 * time.Second
}

// writebackEnd is how the watch of a writeback tail ended.
type writebackEnd struct {
	watched       bool
	capped        bool
	after         time.Duration
	dirty, target uint64
}

func (w writebackEnd) note(limit time.Duration) string {
	switch {
	case !w.watched:
		return ""
	case w.capped:
		return fmt.Sprintf("writeback still going when the %s cap was reached (--writeback-cap): %s of dirty and writeback memory left, against %s before the test; the tail series ends there",
			limit, units.HumanBytes(float64(w.dirty)), units.HumanBytes(float64(w.target)))
	}
	return fmt.Sprintf("writeback drained %s after fio ended", w.after.Round(time.Second))
}

// writebackSlack is how far above its level before the test dirty memory
// may stay and still count as drained: other programs write too.
const writebackSlack = 16 << 20

// writebackIdle is the write rate below which a device that has received
// every byte fio wrote counts as done with the test's writeback.
const writebackIdle = 1e6

// waitWriteback keeps sampling every iv after fio ended until the test's
// writeback is over, for 2 s, and at most the writeback cap: the dirty
// and writeback memory back to its level before the test (within 16
// MiB), or, where other programs keep the host's dirty memory up, the
// target's device having received every byte fio wrote (wrote) and its
// writes down to a trickle. Device traffic alone is not the criterion:
// other tenants may keep a disk busy. progress hears how it goes every
// 15 s.
func (r *runner) waitWriteback(ctx context.Context, iv time.Duration, mu *sync.Mutex, ticks *[]diskstats.Tick, from time.Time, baseline uint64, wrote float64, progress func(string)) writebackEnd {
	start := time.Now()
	end := writebackEnd{watched: true, target: baseline}
	deadline := start.Add(r.cfg.WritebackCap)
	lastReport := start
	progress(fmt.Sprintf("watching writeback after the buffered test until dirty memory is back to %s (at most %s)",
		units.HumanBytes(float64(baseline)), r.cfg.WritebackCap))
	need := int(max(2*time.Second/iv, 2))
	quiet, seen := 0, 0
	devBytes := map[string]float64{} // written to each device since the test began
	var last time.Time
	for quiet < need {
		if !time.Now().Before(deadline) {
			end.capped = true
			break
		}
		select {
		case <-ctx.Done():
			end.watched = false
			return end
		case <-time.After(min(iv, time.Until(deadline)+time.Millisecond)):
		}
		mu.Lock()
		for _, t := range (*ticks)[seen:] {
			seen++
			dt := iv.Seconds()
			if !last.IsZero() {
				dt = t.At.Sub(last).Seconds()
			}
			last = t.At
			var received, rate float64
			for name, d := range t.Devices {
				devBytes[name] += d.WriteBWBytes * dt
				rate = math.Max(rate, d.WriteBWBytes)
			}
			for _, b := range devBytes {
				received = math.Max(received, b)
			}
			if t.At.Before(from) {
				continue
			}
			end.dirty = t.System.DirtyBytes + t.System.WritebackBytes
			if end.dirty <= baseline+writebackSlack || wrote > 0 && received >= wrote && rate < writebackIdle {
				quiet++
			} else {
				quiet = 0
			}
		}
		mu.Unlock()
		if time.Since(lastReport) >= 15*time.Second && quiet < need {
			lastReport = time.Now()
			progress(fmt.Sprintf("writeback: %s of dirty and writeback memory left (%s before the test), %s so far",
				units.HumanBytes(float64(end.dirty)), units.HumanBytes(float64(baseline)), time.Since(start).Round(time.Second)))
		}
	}
	end.after = time.Since(from)
	return end
}

// NoIOError is a test in which fio did no IO at all.
type NoIOError struct{ Test, Stderr string }

func (e *NoIOError) Error() string {
	return "fio did no IO in test " + e.Test + ", so there is nothing to report" + e.Stderr
}

// Hint says where to look.
func (e *NoIOError) Hint() string {
	return "fio's messages (in the result's fio_stderr) say why; check the test's size, offsets and rate limits"
}

// RampError is a test whose IO all fell within its ramp_time: fio
// measured none of it.
type RampError struct {
	Test  string
	RampS float64
}

func (e *RampError) Error() string {
	return fmt.Sprintf("test %s did all its IO within its %s ramp_time: fio measured none of it, so there is nothing to report",
		e.Test, units.FormatSeconds(e.RampS))
}

// Hint says what to change.
func (e *RampError) Hint() string {
	return "lower ramp_time (--ramp), or give the test more to do after it: a larger size, or time_based with a runtime"
}

// allInRamp reports whether fio did IO in the test but measured none:
// not one latency sample in any direction (fio still reports the ramp's
// bytes, and a rate from them over a few milliseconds).
func allInRamp(res *result.Result) bool {
	var ios, measured int64
	for _, d := range []*result.DirResult{res.Read, res.Write, res.Sync} {
		if d != nil {
			ios += d.TotalIOs
			measured += int64(d.Lat.N)
		}
	}
	return ios > 0 && measured == 0
}

func didNoIO(res *result.Result) bool {
	n := int64(0)
	for _, d := range []*result.DirResult{res.Read, res.Write, res.Sync} {
		if d != nil {
			n += d.TotalIOs + int64(d.Lat.N)
		}
	}
	return n == 0
}

// fileReady reports whether the test's file exists at full size before
// fio starts, so that a read test needs no layout and fio can run with
// --readonly: a device always, a preconditioned shared file.
func (r *runner) fileReady(s result.TestSpec, g region) bool {
	if r.cfg.Device != "" {
		return true
	}
	return !g.own && r.target.Preconditioned && g.end <= r.target.SizeBytes
}

// spaceFor checks, just before a test of its own file runs, that its file
// fits in the free space less the reserve. Open checked the suite's
// tests; this holds for the tests a plan adds, and for space others used
// since.
func (r *runner) spaceFor(s result.TestSpec, g region) error {
	if !g.own {
		return nil
	}
	sp, err := freeSpace(r.scratch)
	if err != nil {
		return err
	}
	if g.end > sp.FreeBytes-reserve {
		return &SpaceError{Path: r.target.Path, Need: g.end, FreeBytes: sp.FreeBytes}
	}
	return nil
}

func countBefore(ticks []diskstats.Tick, t time.Time) int {
	for i, tk := range ticks {
		if tk.At.After(t) {
			return i
		}
	}
	return len(ticks)
}

func (r *runner) eta() time.Duration {
	if r.done >= r.planned {
		return 0
	}
	return r.planned - r.done
}

// intervalRates turns two cumulative status documents into the rates over
// the time between them.
func intervalRates(prev, cur *fio.Output) (iops, bw float64, ms int64) {
	if cur == nil {
		return
	}
	sum := func(o *fio.Output) (ios, bytes, rt int64) {
		if o == nil {
			return
		}
		for _, j := range o.AllJobs() {
			for _, d := range []fio.DirStats{j.Read, j.Write, j.Trim} {
				ios += d.TotalIOs
				bytes += d.IOBytes
				rt = max(rt, d.Runtime)
			}
			ios += int64(j.Sync.LatNs.N)
		}
		return
	}
	ci, cb, cr := sum(cur)
	pi, pb, pr := sum(prev)
	ms = cr - pr
	if ms <= 0 {
		return 0, 0, 0
	}
	return float64(ci-pi) * 1000 / float64(ms), float64(cb-pb) * 1000 / float64(ms), ms
}

func jobRuntimeMs(o *fio.Output) int64 { return maxRuntimeMs(o) }

func maxRuntimeMs(o *fio.Output) int64 {
	var rt int64
	for _, j := range o.AllJobs() {
		rt = max(rt, j.Read.Runtime, j.Write.Runtime, j.Trim.Runtime)
	}
	return rt
}

// fill copies fio's report and logs into the result.
func (r *runner) fill(res *result.Result, out *fio.Output, logDir string) error {
	jobs := out.AllJobs()
	if len(jobs) == 0 {
		return errors.New("fio reported no jobs")
	}
	res.FioJSON = out.Raw
	if err := jobError(jobs, res.FioStderr); err != nil {
		return err
	}
	if err := fio.FillFromFio(res, jobs); err != nil {
		return err
	}
	series, err := fio.ReadFioLogs(logDir, "t", r.interval(res.Test))
	if err != nil {
		res.Notes = append(res.Notes, "fio logs unreadable: "+err.Error())
	}
	res.FioSeries = series
	res.SampleIntervalS = r.interval(res.Test).Seconds()
	return nil
}

func jobError(jobs []fio.Job, stderr string) error {
	for _, j := range jobs {
		if j.Error != 0 {
			return fmt.Errorf("fio job %s failed with error %d (%s)%s", j.JobName, j.Error, unix.ErrnoName(unix.Errno(j.Error)), stderrTail(stderr))
		}
	}
	return nil
}

func stderrTail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return ": " + strings.Join(lines, "; ")
}

// deviceSeries turns ticks into per-device series on the result's time
// axis (seconds since fio's measurement started).
func (r *runner) deviceSeries(ticks []diskstats.Tick, origin time.Time) ([]result.DeviceSeries, []result.SystemSample) {
	var out []result.DeviceSeries
	for _, d := range r.res.Devices {
		ds := result.DeviceSeries{Device: d.Name, Role: d.Role, Samples: []result.DeviceSample{}}
		for _, t := range ticks {
			rt, ok := t.Devices[d.Name]
			if !ok {
				continue
			}
			ds.Samples = append(ds.Samples, result.DeviceSample{
				T: round3(t.At.Sub(origin).Seconds()), ReadIOPS: rt.ReadIOPS, WriteIOPS: rt.WriteIOPS,
				ReadBWBytes: rt.ReadBWBytes, WriteBWBytes: rt.WriteBWBytes, ReadAwaitMs: rt.ReadAwaitMs,
				WriteAwaitMs: rt.WriteAwaitMs, QueueSize: rt.QueueSize, ReadReqBytes: rt.ReadReqBytes,
				WriteReqBytes: rt.WriteReqBytes, UtilPct: rt.UtilPct, InFlight: rt.InFlight,
			})
		}
		out = append(out, ds)
	}
	sys := []result.SystemSample{}
	for _, t := range ticks {
		sys = append(sys, result.SystemSample{T: round3(t.At.Sub(origin).Seconds()), IowaitPct: t.System.IowaitPct, CPUBusyPct: t.System.BusyPct,
			DirtyBytes: t.System.DirtyBytes, WritebackBytes: t.System.WritebackBytes, OtherUtilPct: t.System.OtherUtilPct})
	}
	return out, sys
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5*sign(f))) / 1000 }

func sign(f float64) float64 {
	if f < 0 {
		return -1
	}
	return 1
}

// lineWriter calls fn for each complete line written to it.
type lineWriter struct {
	mu  sync.Mutex
	buf []byte
	fn  func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(w.buf[:i])); line != "" {
			w.fn(line)
		}
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if line := strings.TrimSpace(string(w.buf)); line != "" {
		w.fn(line)
	}
	w.buf = nil
}

// Layout writes the shared test file once, as a recorded test: the
// preconditioning of Open (skipped with Config.NoPrecondition), kept as a
// result because a sustained sequential write is worth measuring. With
// maxS > 0 it stops after that many seconds, and the tests that follow
// use only the part written (reads of unwritten blocks never reach the
// disk, so they must not be measured).
func (s *Session) Layout(ctx context.Context, o TestOptions, maxS float64) result.Result {
	spec := result.TestSpec{Name: "layout-write-1m-qd8", Description: "writes the test file once (preconditioning), measured", Group: result.GroupLayout,
		RW: "write", BlockSize: 1 << 20, IODepth: 8, NumJobs: 1, Direct: true, IOEngine: "libaio",
		Options: []result.Option{{Key: "refill_buffers", Value: "1"}}}
	o.Stop = nil
	if maxS > 0 {
		o.Stop = func(st Status) (bool, string) {
			return st.Elapsed >= maxS, fmt.Sprintf("time allowed for the layout (%.0f s)", maxS)
		}
	}
	res := s.Test(ctx, spec, o)
	if res.Status != "ok" || res.Write == nil {
		return res
	}
	t := &s.r.target
	if written := res.Write.IOBytes &^ (1<<20 - 1); written < t.SizeBytes {
		if written < 64<<20 {
			res.Status, res.Error = "failed", fmt.Sprintf("only %s of the test file written in the time allowed", units.HumanBytes(float64(written)))
			return res
		}
		t.SizeReason = fmt.Sprintf("%s of %s laid out in the time allowed", units.HumanBytes(float64(written)), units.HumanBytes(float64(t.SizeBytes)))
		t.SizeBytes = written
	}
	t.Preconditioned = true
	res.Target.Preconditioned = true
	return res
}
