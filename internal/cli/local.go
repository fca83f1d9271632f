package cli

import (
	"context"
	"fmt"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/progress"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
)

// localFlags are the flags of the commands that test this machine's
// disks (run and diagnose): the target, the outputs, the history and what
// the results are compared with. Each means the same in both.
type localFlags struct {
	device      string
	create      bool
	destructive bool
	force       bool
	emulated    string
	size        units.Size
	output      string
	files       outputFiles
	labels      []string
	quiet       bool
	fioBinary   string
	noMetadata  bool
	keep        runSaveOptions
	expect      expectOptions
}

// add declares the flags on cmd, its reports' formats those of -o;
// device, emulated and size say what those mean to it.
func (l *localFlags) add(cmd *cobra.Command, formats report.Registry, device, emulated, size string) {
	f := cmd.Flags()
	f.StringVar(&l.device, "device", "", device)
	f.BoolVar(&l.create, "create", false, "create DIR when it does not exist (and remove it afterwards)")
	f.BoolVar(&l.destructive, "destructive", false, "allow writing --device (destroys its data)")
	f.BoolVar(&l.force, "force", false, "with --destructive, write even to a device that carries a file system or partition table")
	f.StringVar(&l.emulated, "emulated", "", emulated)
	f.Var(&l.size, "size", size)
	outputFlag(f, &l.output, formats, "report format: ")
	l.files.addFlags(f, "also append every result to this NDJSON file as it completes")
	f.StringArrayVar(&l.labels, "label", nil, "key=value label recorded with the results (repeatable)")
	f.BoolVarP(&l.quiet, "quiet", "q", false, "no progress on stderr")
	f.StringVar(&l.fioBinary, "fio", "fio", "fio binary to run")
	f.BoolVar(&l.noMetadata, "no-metadata", false, "do not ask a cloud VM's metadata service which disk and VM size this is")
	l.keep.addFlags(f)
	l.expect.addFlags(cmd)
}

// localTarget is what the flags resolve to: the directory (an emulated
// disk's mount when DIR is not given), the command prefix that runs fio in
// the emulated disk's cgroup, the labels, and the expectation (--expect).
type localTarget struct {
	dir    string
	prefix []string
	labels map[string]string
	expect func(*result.Result)
}

// target checks the flags of the target and resolves them; command
// ("iolens run") names the help a mistake points to.
func (l *localFlags) target(cmd *cobra.Command, streams IOStreams, command, dir string) (localTarget, error) {
	bad := func(format string, args ...any) error {
		return &UsageError{Err: fmt.Errorf(format, args...), Help: "see '" + command + " --help'"}
	}
	t := localTarget{dir: dir}
	if dir != "" && l.device != "" {
		return t, bad("give either DIR or --device, not both")
	}
	var err error
	if l.emulated != "" {
		if l.device != "" {
			return t, usageErr("--emulated tests a directory on the emulated disk, not --device")
		}
		var note string
		t.dir, t.prefix, note, err = emulate.RunTarget(l.emulated, dir)
		if note != "" {
			fmt.Fprintf(streams.ErrOut, "%s: %s\n", command, note)
		}
		if err != nil {
			return t, err
		}
	}
	if (l.destructive || l.force) && l.device == "" {
		return t, bad("--destructive and --force apply to --device only")
	}
	if l.create && l.device != "" {
		return t, bad("--create applies to DIR only")
	}
	if t.labels, err = parseLabels(l.labels); err != nil {
		return t, err
	}
	t.expect, err = l.expect.diagnoser(cmd)
	return t, err
}

// recipe is the recipe of a run of formats' reports, its progress prog.
func (l *localFlags) recipe(ctx context.Context, prog *progress.Run, formats report.Registry, expect func(*result.Result)) *recipe {
	return &recipe{output: l.output, formats: formats, files: &l.files, save: &l.keep, reads: reads{db: l.keep.db},
		expect: expect, defaultExpect: metadataDefault(ctx, prog, l.noMetadata)}
}
