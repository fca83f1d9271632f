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
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
)

type diagnoseOptions struct {
	device      string
	create      bool
	destructive bool
	force       bool
	emulated    string
	budget      units.Duration
	precision   string
	size        units.Size
	output      string
	files       outputFiles
	labels      []string
	quiet       bool
	verbose     bool
	fioBinary   string
	noMetadata  bool
	keep        runSaveOptions
	expect      expectOptions
	existing    bool
	maxRead     units.Size
	sustained   bool
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
	f.StringVar(&o.device, "device", "", "diagnose a raw block device instead of a directory (writes it: needs --destructive)")
	f.BoolVar(&o.create, "create", false, "create DIR when it does not exist (and remove it afterwards)")
	f.BoolVar(&o.destructive, "destructive", false, "allow writing --device (destroys its data)")
	f.BoolVar(&o.force, "force", false, "with --destructive, write even to a device that carries a file system or partition table")
	f.StringVar(&o.emulated, "emulated", "", "diagnose emulated disk NAME ('iolens emulate create')")
	f.Var(&o.budget, "budget", "time for the whole plan, layout included (e.g. 3m, 90s)")
	f.StringVar(&o.precision, "precision", o.precision, "relative precision of each figure (e.g. 2%, 0.05)")
	f.Var(&o.size, "size", "test file size (default: 1 GiB or a tenth of the free space; laid out within the budget)")
	outputFlag(f, &o.output, report.Diagnoses, "report format: ")
	o.files.addFlags(f, "also append every result to this NDJSON file as it completes")
	f.StringArrayVar(&o.labels, "label", nil, "key=value label recorded with the results (repeatable)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress on stderr")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "text: every finding of every test, with fio's details and the evidence")
	f.StringVar(&o.fioBinary, "fio", "fio", "fio binary to run")
	f.BoolVar(&o.sustained, "sustained", false, "run the burst check to its end: write until burst credits or a write cache run out, for what --budget leaves after the other tests")
	f.BoolVar(&o.noMetadata, "no-metadata", false, "do not ask a cloud VM's metadata service which disk and VM size this is")
	f.BoolVar(&o.existing, "existing", false, "sample the files already in DIR with direct reads and write nothing: first read against second (a restored volume is cold)")
	f.Var(&o.maxRead, "max-read", "with --existing, the most it reads (first and second reads together)")
	o.keep.addFlags(f)
	o.expect.addFlags(cmd)
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
	rc := &recipe{output: o.output, formats: report.Diagnoses, files: &o.files, save: &o.keep, reads: reads{db: o.keep.db},
		verbose: o.verbose, ioErrorsFail: true}
	if err := rc.checkFormat(); err != nil {
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
	if dir != "" && o.device != "" {
		return &UsageError{Err: fmt.Errorf("give either DIR or --device, not both"), Help: "see 'iolens diagnose --help'"}
	}
	if o.create && o.device != "" {
		return &UsageError{Err: fmt.Errorf("--create applies to DIR only"), Help: "see 'iolens diagnose --help'"}
	}
	if o.device != "" && !o.destructive {
		return &UsageError{Err: fmt.Errorf("diagnose writes the device: --device %s needs --destructive", o.device),
			Help: "add --destructive if nothing on it matters, or give a directory on a file system of that device"}
	}
	var prefix []string
	if o.emulated != "" {
		if dir, prefix, err = emulatedTarget(streams.ErrOut, "iolens diagnose", o.emulated, dir, o.device); err != nil {
			return err
		}
	}
	labels, err := parseLabels(o.labels)
	if err != nil {
		return err
	}
	if rc.expect, err = o.expect.diagnoser(cmd); err != nil {
		return err
	}
	suite := plan.Suite()
	cfg := runner.Config{Suite: suite, Dir: dir, Create: o.create, Device: o.device, Destructive: o.destructive, Force: o.force,
		SizeBytes: int64(o.size), Labels: labels, FioBinary: o.fioBinary, NoPrecondition: true, Plan: true,
		IolensVersion: Version, Emulated: o.emulated, CommandPrefix: prefix, RunID: runner.NewRunID()}
	prog := newProgress(streams.ErrOut, o.quiet)
	rc.defaultExpect = metadataDefault(ctx, prog, o.noMetadata)
	var closeErr error
	out, planErr, err := rc.run(ctx, streams, prog, cfg.RunID, suite.Name, labels, func() {
		prog.Header("iolens diagnose %s: budget %s, precision %s%s", cfg.RunID, budget, strconv.FormatFloat(precision*100, 'g', 3, 64)+"%", rootDiskWords(dir, o.device))
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
func metadataDefault(ctx context.Context, prog *Progress, off bool) func() func(*result.Result) {
	if off {
		return nil
	}
	return func() func(*result.Result) { return metadataExpect(ctx, prog) }
}

// metadataExpect is cloudmeta.ExpectFromMetadata, saying what it found
// on prog; nil with $IOLENS_NO_METADATA.
func metadataExpect(ctx context.Context, prog *Progress) func(*result.Result) {
	if os.Getenv(EnvNoMetadata) != "" {
		return nil
	}
	return cloudmeta.ExpectFromMetadata(ctx, func(s string) { prog.Line("%s", s) })
}
