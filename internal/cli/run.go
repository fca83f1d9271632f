package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/metrics"
	"github.com/iolens/iolens/internal/pipeline"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/userfile"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

type runOptions struct {
	localFlags
	suite          string
	tests          []string
	jobFile        string
	runtime        units.Duration
	ramp           units.Duration
	writebackCap   units.Duration
	repeat         int
	noPrecondition bool
	incompressible bool
	untilSteady    bool
	minRuntime     units.Duration
	maxRuntime     units.Duration
}

func newRunCommand(streams IOStreams) *cobra.Command {
	o := &runOptions{minRuntime: units.Duration(20 * time.Second), writebackCap: units.Duration(runner.DefaultWritebackCap)}
	cmd := &cobra.Command{
		Use:   "run [DIR]",
		Short: "Run a benchmark suite against a directory or a block device",
		Long: `Run a suite of fio tests against DIR (default ./iolens-scratch) or a raw
block device. iolens works in a subdirectory of its own and removes it
afterwards, on success, failure or Ctrl-C. A DIR that does not exist is
refused unless --create is given (a typo, or a volume that is not mounted,
would measure the disk below it). Each test records fio's json+ report with
latency histograms, fio's 1 s logs and 1 s samples of every block device
behind the target. With --device, every test runs on the device itself.`,
		Example: `  iolens run --suite quick
  iolens run /mnt/data --suite standard --repeat 3 --out results.ndjson
  iolens run --device /dev/vdb --suite quick --destructive
  iolens run /var/lib/etcd-test --suite etcd
  iolens run /mnt/data --job my-tests.fio -o md
  iolens run /mnt/data --suite quick --html report.html
  iolens run / --suite aks-2019 --test test1-write-4k-qd1-direct`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			return o.run(cmd, streams, dir)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.suite, "suite", "standard", "built-in suite ('iolens suites' lists them)")
	f.StringArrayVar(&o.tests, "test", nil, "run only this test of the suite (repeatable; 'iolens suites' lists the tests)")
	f.StringVar(&o.jobFile, "job", "", "fio job file to run instead of a suite, one test per section")
	markInput(f, "job")
	o.add(cmd, report.Results, "test a raw block device instead of a directory",
		"run on emulated disk NAME ('iolens emulate create'): fio runs in its throttled cgroup, DIR defaults to its mount",
		"test file size, e.g. 4G; scales down tests that set a larger size, saying so (default: the suite's size, or 1 GiB or a tenth of the free space)")
	f.Var(&o.runtime, "runtime", "time per test, e.g. 30s, 2m or plain seconds (default: each suite's own)")
	f.Var(&o.ramp, "ramp", "warm-up before measuring, e.g. 5s (default: each suite's own)")
	f.Var(&o.writebackCap, "writeback-cap", "after a buffered test, watch the writeback for at most this long (0: not at all)")
	f.IntVar(&o.repeat, "repeat", 1, "run every test N times")
	f.BoolVar(&o.noPrecondition, "no-precondition", false, "do not write the test file once before the tests")
	f.BoolVar(&o.incompressible, "incompressible", false, "fresh random data for every write, for storage that compresses (costs fio CPU)")
	f.BoolVar(&o.untilSteady, "until-steady", false, "end each time-based test once its 1 s IOPS are steady (SNIA PTS criteria over 20 s)")
	f.Var(&o.minRuntime, "min-runtime", "with --until-steady: how long each test runs at least")
	f.Var(&o.maxRuntime, "max-runtime", "with --until-steady: how long each test runs at most (default: the test's runtime)")
	return cmd
}

// writebackCap turns the flag into runner.Config's convention, where 0
// is the default and a negative cap turns the watch off.
func writebackCap(d units.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return time.Duration(d)
}

func seconds(d units.Duration) float64 { return time.Duration(d).Seconds() }

func usageErr(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...), Help: "see 'iolens run --help'"}
}

func parseLabels(in []string) (map[string]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, l := range in {
		k, v, err := units.ParseLabel(l)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--label: %w", err), Help: hint.Of(err)}
		}
		if limits.ReservedLabel(k) {
			return nil, &UsageError{Err: fmt.Errorf("--label %s: iolens sets this label itself, when it compares the disk with an expectation", k),
				Help: "say what the disk should be with --expect (and --vm); pick another name for a label of your own"}
		}
		m[k] = v
	}
	// The labels become Prometheus labels too (--metrics-addr, export
	// prometheus, --push): two that would be one are refused now.
	if err := metrics.CheckLabelKeys(m); err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--label: %w", err), Help: hint.Of(err)}
	}
	return m, nil
}

// jobWait is how long --job - waits for standard input to end.
const jobWait = 30 * time.Second

// suiteFor resolves --suite and --job, returning the job file's text
// too. --job - (or /dev/stdin) reads standard input, at most as much as a
// job file may be, and gives up when nothing ends it within jobWait or
// on Ctrl-C.
func suiteFor(ctx context.Context, streams IOStreams, name, jobFile string, suiteSet bool) (result.Suite, string, error) {
	if jobFile == "" {
		s, err := runner.LookupSuite(name)
		return s, "", err
	}
	if suiteSet {
		return result.Suite{}, "", usageErr("--suite and --job are exclusive")
	}
	var text string
	if jobFile == "-" || jobFile == "/dev/stdin" {
		if f, ok := streams.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			fmt.Fprintln(streams.ErrOut, "iolens: reading the job file from standard input (Ctrl-D ends it)")
		}
		b, err := userfile.ReadAll(ctx, streams.In, "standard input", fio.MaxJobFileBytes, jobWait)
		if err != nil {
			return result.Suite{}, "", &hint.Error{Err: fmt.Errorf("--job -: %w", err), Advice: hint.Of(err)}
		}
		jobFile, text = "stdin", string(b)
	} else {
		var err error
		if text, err = runner.ReadJobFile(jobFile); err != nil {
			return result.Suite{}, "", err
		}
	}
	s, err := runner.SuiteFromJobFile(jobFile, text)
	return s, text, err
}

func (o *runOptions) run(cmd *cobra.Command, streams IOStreams, dir string) error {
	ctx := cmd.Context()
	prog := newProgress(streams.ErrOut, o.quiet)
	if err := (&recipe{formats: report.Results, output: o.output}).checkFormat(); err != nil {
		return err
	}
	if o.repeat < 1 {
		return usageErr("--repeat must be at least 1")
	}
	if o.untilSteady && o.maxRuntime > 0 && o.maxRuntime < o.minRuntime {
		return usageErr("--max-runtime (%s) is below --min-runtime (%s)", o.maxRuntime.String(), o.minRuntime.String())
	}
	t, err := o.target(cmd, streams, "iolens run", dir)
	if err != nil {
		return err
	}
	suite, _, err := suiteFor(ctx, streams, o.suite, o.jobFile, o.jobFile != "" && o.suite != "standard")
	if err != nil {
		return err
	}
	if suite, err = runner.SelectTests(suite, o.tests); err != nil {
		return &UsageError{Err: err, Help: hint.Of(err)}
	}
	cfg := runner.Config{
		Suite: suite, Dir: t.dir, Create: o.create, Device: o.device, Destructive: o.destructive, Force: o.force,
		SizeBytes: int64(o.size), RuntimeS: seconds(o.runtime), RampS: seconds(o.ramp), RampSet: cmd.Flags().Changed("ramp"), Repeat: o.repeat,
		WritebackCap: writebackCap(o.writebackCap), Labels: t.labels, FioBinary: o.fioBinary, NoPrecondition: o.noPrecondition,
		Incompressible: o.incompressible, IolensVersion: Version, Emulated: o.emulated, CommandPrefix: t.prefix, RunID: runner.NewRunID(),
	}
	if o.untilSteady {
		pipeline.UntilSteady(&cfg, seconds(o.minRuntime), seconds(o.maxRuntime))
	}
	rc := o.recipe(ctx, prog, report.Results, t.expect)
	rc.untilSteady, rc.reads.inputs = o.untilSteady, []string{o.jobFile}
	out, runErr, err := rc.run(ctx, streams, prog, cfg.RunID, suite.Name, t.labels, func() {
		prog.Header("iolens run %s: suite %s, %d tests x %d%s", cfg.RunID, suite.Name, len(suite.Tests), o.repeat, rootDiskWords(t.dir, o.device))
	}, func(snk *pipeline.Sink, keeper *pipeline.Run) (diagnosis.Outcome, error) {
		return pipeline.Suite(ctx, cfg, snk, keeper.Events(prog.Event))
	})
	return localStatus(ctx, out, runErr, err)
}
