package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/iolens/iolens/internal/cloudmeta"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/pipeline"
	"github.com/iolens/iolens/internal/plan"
	"github.com/iolens/iolens/internal/progress"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
)

type diagnoseOptions struct {
	localFlags
	budget    units.Duration
	precision string
	verbose   bool
	existing  bool
	maxRead   units.Size
	sustained bool
}

func newDiagnoseCommand(streams IOStreams) *cobra.Command {
	o := &diagnoseOptions{budget: units.Duration(3 * time.Minute), precision: "2%", maxRead: units.Size(64 << 20)}
	cmd := &cobra.Command{
		Use:   "diagnose [DIR]",
		Short: "Say what a disk is and which limit binds each workload, in three minutes",
		Long: `Diagnose says what a disk delivers and what its bottleneck is: the limit
that binds each workload (a flat IOPS or bandwidth cap, latency, the device,
the CPU). It writes one test file in DIR (--size: 1 GiB, or a tenth of the
free space) and removes it when it ends, however it ends.

It lays the file out once, then measures random read and write IOPS,
sequential bandwidth, QD1 latency, the queue depths up to the knee, fsync
until the etcd verdict is certain, and a sustained write that looks for a
burst cliff. Each step ends as soon as its figure is known to --precision;
the whole plan fits in --budget, and the report says what it had no time to
establish.

The report opens with the verdict in a few lines, what to change, and the
disk model (IOPS and latency against queue depth, with what binds each
figure and the catalog disks whose published limits fit).

DIR must exist (--create makes it, and removes it afterwards): a typo, or a
volume that is not mounted, would measure the disk below it. With --device,
every step runs on the device itself.

With --existing, DIR holds data that must not be touched: diagnose writes
nothing there (no test file, no history) and samples blocks of its files
with direct reads, each read a first and a second time, one at a time and
32 at once, reading at most --max-read. A volume restored from a snapshot
fetches each block on its first read: it is named cold, with what a first
read costs, how long warming it all takes at the measured rate, and the
command that does it.

On a cloud VM the instance metadata says which disk and VM size to compare
with (--no-metadata skips it; --expect overrides it).`,
		Example: `  iolens diagnose                        # ./iolens-scratch
  iolens diagnose /var/lib/etcd
  iolens diagnose /mnt/data --budget 5m --html report.html
  iolens diagnose --device /dev/vdb --destructive
  iolens diagnose --emulated p10
  iolens diagnose /mnt/data -o json | jq .disk
  iolens diagnose --existing /var/lib/postgresql --max-read 256MiB`,
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
	o.add(cmd, report.Diagnoses, "diagnose a raw block device instead of a directory (writes it: needs --destructive)",
		"diagnose emulated disk NAME ('iolens emulate create')",
		"test file size (default: 1 GiB or a tenth of the free space; laid out within the budget)")
	f.Var(&o.budget, "budget", "time for the whole plan, layout included (e.g. 3m, 90s)")
	f.StringVar(&o.precision, "precision", o.precision, "relative precision of each figure (e.g. 2%, 0.05)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "text: every finding of every test, with fio's details and the evidence")
	f.BoolVar(&o.sustained, "sustained", false, "run the burst check to its end: write until burst credits or a write cache run out, for what --budget leaves after the other tests")
	f.BoolVar(&o.existing, "existing", false, "sample the files already in DIR with direct reads and write nothing: first read against second (a restored volume is cold)")
	f.Var(&o.maxRead, "max-read", "with --existing, the most it reads (first and second reads together)")
	groupFlags(cmd, flagGroup{Title: "Flags"}, outputFlags, cloudFlags, vendorFlags)
	return cmd
}

func (o *diagnoseOptions) run(cmd *cobra.Command, streams IOStreams, dir string) error {
	ctx := cmd.Context()
	if o.existing {
		return o.runExisting(cmd, streams, dir)
	}
	if cmd.Flags().Changed("max-read") {
		return &UsageError{Err: fmt.Errorf("--max-read applies with --existing only"), Help: "see 'iolens diagnose --help'"}
	}
	prog := newProgress(streams.ErrOut, o.quiet)
	if err := (&recipe{formats: report.Diagnoses, output: o.output}).checkFormat(); err != nil {
		return err
	}
	precision, err := units.ParsePrecision(o.precision)
	if err != nil {
		return &UsageError{Err: err, Help: "e.g. --precision 2% or --precision 0.05"}
	}
	budget := time.Duration(o.budget)
	if least := plan.MinBudget(); budget < least || budget > 24*time.Hour {
		return &UsageError{Err: fmt.Errorf("--budget %s is outside %s to 24h", budget, least),
			Help: fmt.Sprintf("the plan's core tests and fsync need at least %s; 3m (the default) also fits the burst check and the QD curves", least)}
	}
	t, err := o.target(cmd, streams, "iolens diagnose", dir)
	if err != nil {
		return err
	}
	if o.device != "" && !o.destructive {
		return &UsageError{Err: fmt.Errorf("diagnose writes the device: --device %s needs --destructive", o.device),
			Help: "add --destructive if nothing on it matters, or give a directory on a file system of that device"}
	}
	suite := plan.Suite()
	cfg := runner.Config{Suite: suite, Dir: t.dir, Create: o.create, Device: o.device, Destructive: o.destructive, Force: o.force,
		SizeBytes: int64(o.size), Labels: t.labels, FioBinary: o.fioBinary, NoPrecondition: true, Plan: true,
		IolensVersion: Version, Emulated: o.emulated, CommandPrefix: t.prefix, RunID: runner.NewRunID()}
	rc := o.recipe(ctx, prog, report.Diagnoses, t.expect)
	rc.verbose, rc.ioErrorsFail = o.verbose, true
	var closeErr error
	out, planErr, err := rc.run(ctx, streams, prog, cfg.RunID, suite.Name, t.labels, func() {
		prog.Header("iolens diagnose %s: budget %s, precision %s%s", cfg.RunID, budget, strconv.FormatFloat(precision*100, 'g', 3, 64)+"%", rootDiskWords(t.dir, o.device))
	}, func(snk *pipeline.Sink, _ *pipeline.Run) (diagnosis.Outcome, error) {
		s, err := runner.Open(ctx, cfg, prog.Event)
		if err != nil {
			return diagnosis.Outcome{}, err
		}
		defer func() { _ = s.Close(ctx) }()
		out, err := pipeline.Plan(ctx, s, plan.Options{Budget: budget, Precision: precision, Sustained: o.sustained}, snk, func(e plan.Event) {
			prog.Line("diagnose: %s (%s of the budget left)", e.Message, units.Clock(e.Left))
		})
		closeErr = s.Close(ctx)
		return out, err
	})
	if err := localStatus(ctx, out, planErr, err); err != nil {
		return err
	}
	return closeErr
}

// checkFailed is a check's verdict, not a crash: it exits with the
// status of findings at the --fail-on severity (4).
type checkFailed string

func (e checkFailed) Error() string        { return string(e) }
func (e checkFailed) Is(target error) bool { return target == ErrFindings }

// rootDiskWords ends a command's first line when DIR is on the root disk
// while other disks are mounted.
func rootDiskWords(dir, device string) string {
	if device != "" {
		return ""
	}
	if note := runner.RootDisk(dir); note != "" {
		return "; " + note
	}
	return ""
}

// EnvNoMetadata, when set to anything, turns the cloud metadata lookup off
// as --no-metadata does.
const EnvNoMetadata = "IOLENS_NO_METADATA"

// metadataDefault is the expectation a run without --expect takes from
// the cloud metadata, asked when the run starts (nil with --no-metadata).
func metadataDefault(ctx context.Context, prog *progress.Run, off bool) func() func(*result.Result) {
	if off {
		return nil
	}
	return func() func(*result.Result) { return metadataExpect(ctx, prog) }
}

// metadataExpect is cloudmeta.ExpectFromMetadata, saying what it found
// on prog; nil with $IOLENS_NO_METADATA.
func metadataExpect(ctx context.Context, prog *progress.Run) func(*result.Result) {
	if os.Getenv(EnvNoMetadata) != "" {
		return nil
	}
	return cloudmeta.ExpectFromMetadata(ctx, func(s string) { prog.Line("%s", s) })
}
