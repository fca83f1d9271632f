package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/units"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newEmulateCommand(streams IOStreams) *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:   "emulate",
		Short: "Emulate a cloud disk's limits, bursting and write cache on a local loop device",
		Long: `An emulated disk is a file system on a loop device whose IOPS and bandwidth
the kernel's block throttle caps (cgroup v2 io.max, else v1 blkio.throttle).
The caps apply to processes in the disk's cgroup: run them with
'iolens emulate exec NAME -- CMD' or 'iolens run --emulated NAME'.
A controller daemon moves the caps over time for credit bursting and a
write cache that fills and stalls, and logs each change with a timestamp
('iolens emulate events NAME'). Needs root.

With --latency, each read, write and flush also takes at least that long:
a FUSE layer under the loop device answers every IO after its latency,
many at once, so deep queues still reach the caps.

Not emulated: a single cap over reads and writes together (the kernel caps
each direction apart). On cgroup v1 buffered
writes are not capped: the kernel's flusher threads write them back outside
the cgroup; use direct IO there.`,
		Example: `  iolens emulate create pg --profile azure:P4 --cache readwrite --scale 10
  iolens emulate create etcd --iops 3000 --bw 125MB/s --latency 1ms --flush-latency p50=2ms,p99=8ms
  iolens emulate exec pg -- fio --name=w --directory=/var/lib/iolens/emulate/pg/mnt --rw=write --bs=1M --size=1G --direct=1
  iolens run --emulated pg --suite quick
  iolens emulate status pg
  iolens emulate rm pg`,
	}
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", emulate.DefaultDir(), "where emulated disks keep their state ($IOLENS_EMULATE_DIR)")
	dir := func() string { return stateDir }
	cmd.AddCommand(newEmulateCreateCommand(streams, dir), newEmulateListCommand(streams, dir), newEmulateStatusCommand(streams, dir),
		newEmulateExecCommand(streams, dir), newEmulateRmCommand(streams, dir), newEmulateEventsCommand(streams, dir),
		newEmulateProfilesCommand(streams), newEmulateControllerCommand(dir), newEmulateLatencyCommand(dir))
	return cmd
}

type emulateCreateOptions struct {
	size                       string
	fs                         string
	iops, readIOPS, writeIOPS  float64
	bw, readBW, writeBW        string
	burstIOPS                  float64
	burstBW                    string
	burstSeconds, burstCredits float64
	startEmpty                 bool
	profile                    string
	cache, cacheSize, cacheBW  string
	cacheIOPS                  float64
	scale                      float64
	cgroup                     string
	output                     string
	latency, readLatency       string
	writeLatency, flushLatency string
	ram                        bool
}

// numberFlag is a float flag read with units.ParseNumber: NaN,
// infinities, negatives and out-of-range values are refused.
type numberFlag struct {
	v      *float64
	lo, hi float64
}

func (n numberFlag) Set(s string) error {
	v, err := units.ParseNumber(s, n.lo, n.hi)
	if err != nil {
		return err
	}
	*n.v = v
	return nil
}
func (n numberFlag) String() string { return strconv.FormatFloat(*n.v, 'f', -1, 64) }
func (n numberFlag) Type() string   { return "number" }

func numberVar(f *pflag.FlagSet, v *float64, name string, def, lo, hi float64, usage string) {
	*v = def
	f.Var(numberFlag{v: v, lo: lo, hi: hi}, name, usage)
}

func emulateUsage(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...), Help: "see 'iolens emulate create --help'"}
}

func newEmulateCreateCommand(streams IOStreams, stateDir func() string) *cobra.Command {
	o := &emulateCreateOptions{}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an emulated disk and print where it is mounted",
		Long: `Create a sparse backing file, a loop device (direct IO on), a file system
mounted under the state directory, a cgroup with the caps, and the
controller daemon. If anything fails, or on Ctrl-C, everything made so far
is removed.

Limits: --iops/--bw cap reads and writes each; --read-iops, --write-iops,
--read-bw, --write-bw set one direction. Bandwidth needs a unit that says
its base: 25MB/s (10^6) or 128MiB/s (2^20).

Credit bursting: --burst-iops/--burst-bw with a bucket of --burst-seconds
at the burst rate (or --burst-credits IOs); it starts full unless
--start-empty. Credits drain by (usage - baseline), refill by
(baseline - usage); once dry, bursting resumes when one second's worth is
back.

--cache readonly runs reads at the cache's rates (every read a hit);
--cache readwrite runs IO at the cache's rates until --cache-size of
writes are waiting for the disk, then IO gets 1 IOPS per direction until
the cache has drained at the disk's write rate.

--scale F divides bucket and cache sizes by F so a 30-minute bucket lasts
30/F minutes; rates are not scaled.

Latency: --latency sets the least time every read, write and flush takes;
--read-latency, --write-latency and --flush-latency override it for one
kind. A value is fixed (2ms), uniform (2ms±0.5ms, or 2ms+-0.5ms: between
1.5 and 2.5 ms), or log-normal from two percentiles (p50=1ms,p99=4ms).
IOs wait out their latency side by side: QD1 gets about 1/latency IOPS,
deep queues still reach the caps. --latency 0 adds the layer alone.`,
		Example: `  iolens emulate create p4 --profile azure:P4
  iolens emulate create seed003 --profile azure:P4 --cache readwrite
  iolens emulate create gp2 --profile aws:gp2:100GiB --scale 100
  iolens emulate create fixed --iops 500 --bw 20MB/s --fs xfs
  iolens emulate create net --iops 5000 --latency 2ms
  iolens emulate create etcd --iops 3000 --latency 1ms --flush-latency p50=2ms,p99=8ms`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := o.spec(cmd.Flags(), args[0], stateDir())
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), streams, spec)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.size, "size", "4G", "backing file size (sparse), e.g. 4G")
	f.StringVar(&o.fs, "fs", "ext4", "file system: ext4 or xfs")
	numberVar(f, &o.iops, "iops", 0, 0, 1e9, "IOPS cap for reads and for writes")
	numberVar(f, &o.readIOPS, "read-iops", 0, 0, 1e9, "read IOPS cap")
	numberVar(f, &o.writeIOPS, "write-iops", 0, 0, 1e9, "write IOPS cap")
	f.StringVar(&o.bw, "bw", "", "bandwidth cap for reads and for writes, e.g. 25MB/s")
	f.StringVar(&o.readBW, "read-bw", "", "read bandwidth cap")
	f.StringVar(&o.writeBW, "write-bw", "", "write bandwidth cap")
	numberVar(f, &o.burstIOPS, "burst-iops", 0, 0, 1e9, "burst IOPS while credits last")
	f.StringVar(&o.burstBW, "burst-bw", "", "burst bandwidth while credits last")
	numberVar(f, &o.burstSeconds, "burst-seconds", 0, 0, 1e9, "credit bucket size: seconds at the burst rate (before --scale)")
	numberVar(f, &o.burstCredits, "burst-credits", 0, 0, 1e15, "IOPS credit bucket size in IOs (before --scale), instead of --burst-seconds")
	f.BoolVar(&o.startEmpty, "start-empty", false, "start with an empty credit bucket")
	f.StringVar(&o.profile, "profile", "", "cloud disk profile ('iolens emulate profiles' lists them); flags given override it")
	f.StringVar(&o.cache, "cache", "none", "host cache: none, readonly or readwrite")
	f.StringVar(&o.cacheSize, "cache-size", "3G", "readwrite cache: written data it holds before it stalls (before --scale)")
	numberVar(f, &o.cacheIOPS, "cache-iops", emulate.DefaultCacheIOPS, 0, 1e9, "cache IOPS (default: Azure Standard_D8s_v3 cached limit)")
	f.StringVar(&o.cacheBW, "cache-bw", "128MB/s", "cache bandwidth (default: Azure Standard_D8s_v3 cached limit)")
	numberVar(f, &o.scale, "scale", 1, 0, 1e6, "time scale: bucket and cache sizes are divided by it")
	f.StringVar(&o.cgroup, "cgroup", "auto", "cgroup interface: auto, v1 or v2")
	f.StringVarP(&o.output, "output", "o", "text", "text or json")
	f.StringVar(&o.latency, "latency", "", "least time of every read, write and flush: 2ms, 2ms±0.5ms or p50=1ms,p99=4ms")
	f.StringVar(&o.readLatency, "read-latency", "", "read latency (overrides --latency)")
	f.StringVar(&o.writeLatency, "write-latency", "", "write latency (overrides --latency)")
	f.StringVar(&o.flushLatency, "flush-latency", "", "flush (fsync) latency (overrides --latency)")
	f.BoolVar(&o.ram, "ram", false, "keep the backing file in RAM (a tmpfs): the host's disk plays no part, memory is used for what is written")
	return cmd
}

func (o *emulateCreateOptions) spec(f *pflag.FlagSet, name, stateDir string) (emulate.Spec, error) {
	s := emulate.Spec{Name: name, Dir: stateDir, FS: o.fs, Scale: o.scale, Cache: emulate.CacheMode(o.cache), RAM: o.ram}
	if o.profile != "" {
		p, err := emulate.LookupProfile(o.profile)
		if err != nil {
			return s, &UsageError{Err: err, Help: "see 'iolens emulate profiles'"}
		}
		p.Apply(&s)
	}
	size, err := units.ParseSize(o.size)
	if err != nil {
		return s, emulateUsage("--size: %v", err)
	}
	s.SizeBytes = size
	rate := func(flag, v string, dst ...*float64) error {
		if !f.Changed(flag) {
			return nil
		}
		r, err := units.ParseRate(v)
		if err != nil {
			return emulateUsage("--%s: %v", flag, err)
		}
		for _, d := range dst {
			*d = r
		}
		return nil
	}
	num := func(flag string, v float64, dst ...*float64) {
		if f.Changed(flag) {
			for _, d := range dst {
				*d = v
			}
		}
	}
	l := &s.Limits
	num("iops", o.iops, &l.ReadIOPS, &l.WriteIOPS)
	num("read-iops", o.readIOPS, &l.ReadIOPS)
	num("write-iops", o.writeIOPS, &l.WriteIOPS)
	num("burst-iops", o.burstIOPS, &s.BurstIOPS)
	num("burst-seconds", o.burstSeconds, &s.BurstSeconds)
	if f.Changed("burst-credits") {
		s.BucketIOs = o.burstCredits
	}
	s.StartEmpty = o.startEmpty
	for _, r := range []struct {
		flag, v string
		dst     []*float64
	}{{"bw", o.bw, []*float64{&l.ReadBPS, &l.WriteBPS}}, {"read-bw", o.readBW, []*float64{&l.ReadBPS}},
		{"write-bw", o.writeBW, []*float64{&l.WriteBPS}}, {"burst-bw", o.burstBW, []*float64{&s.BurstBPS}}} {
		if err := rate(r.flag, r.v, r.dst...); err != nil {
			return s, err
		}
	}
	if s.Cache != emulate.CacheNone {
		s.CacheIOPS = o.cacheIOPS
		if s.CacheBPS, err = units.ParseRate(o.cacheBW); err != nil {
			return s, emulateUsage("--cache-bw: %v", err)
		}
	}
	if s.Cache == emulate.CacheReadWrite {
		cs, err := units.ParseSize(o.cacheSize)
		if err != nil {
			return s, emulateUsage("--cache-size: %v", err)
		}
		s.CacheBytes = float64(cs)
	}
	if o.scale <= 0 {
		return s, emulateUsage("--scale must be above 0")
	}
	if err := o.latencies(f, &s); err != nil {
		return s, err
	}
	switch o.cgroup {
	case "auto":
	case "v1", "v2":
		s.Cgroup = emulate.CgroupMode(o.cgroup)
	default:
		return s, emulateUsage("--cgroup: auto, v1 or v2")
	}
	if o.output != "text" && o.output != "json" {
		return s, emulateUsage("-o: text or json")
	}
	return s, nil
}

// latencies sets the spec's latency layer from the flags, over any
// latency the profile carries.
func (o *emulateCreateOptions) latencies(f *pflag.FlagSet, s *emulate.Spec) error {
	var l emulate.Latency
	if s.Latency != nil {
		l = *s.Latency
	}
	set := false
	for _, x := range []struct {
		flag, v string
		dst     []*emulate.Dist
	}{{"latency", o.latency, []*emulate.Dist{&l.Read, &l.Write, &l.Flush}}, {"read-latency", o.readLatency, []*emulate.Dist{&l.Read}},
		{"write-latency", o.writeLatency, []*emulate.Dist{&l.Write}}, {"flush-latency", o.flushLatency, []*emulate.Dist{&l.Flush}}} {
		if !f.Changed(x.flag) {
			continue
		}
		d, err := emulate.ParseDist(x.v)
		if err != nil {
			return &UsageError{Err: fmt.Errorf("--%s: %w", x.flag, err), Help: "e.g. --" + x.flag + " 2ms, 2ms±0.5ms, 2ms+-0.5ms or p50=1ms,p99=4ms"}
		}
		for _, p := range x.dst {
			*p = d
		}
		set = true
	}
	if set || s.Latency != nil {
		s.Latency = &l
	}
	return nil
}

func (o *emulateCreateOptions) run(ctx context.Context, streams IOStreams, spec emulate.Spec) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the iolens binary for the controller: %w", err)
	}
	root, err := filepath.Abs(spec.Dir)
	if err != nil {
		return err
	}
	spec.Dir = root
	spec.Executable = exe
	d, err := emulate.CreateWithProgress(ctx, spec, func(step string) {
		if o.output == "text" && step != "done" {
			fmt.Fprintf(streams.ErrOut, "create %s: %s\n", spec.Name, step)
		}
	})
	if err != nil {
		if errors.Is(err, emulate.ErrSpec) {
			return &UsageError{Err: err, Help: "see 'iolens emulate create --help'"}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w (nothing left behind)", err)
		}
		return err
	}
	if o.output == "json" {
		return writeJSON(streams.Out, d)
	}
	describeDisk(streams.Out, d)
	fmt.Fprintf(streams.Out, "\nrun on it:   iolens emulate exec %s -- CMD...\n", d.Name)
	fmt.Fprintf(streams.Out, "             iolens run --emulated %s\n", d.Name)
	fmt.Fprintf(streams.Out, "remove it:   iolens emulate rm %s\n", d.Name)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func limitsLine(l emulate.Limits) string {
	return fmt.Sprintf("read %s, %s; write %s, %s", emulate.FormatIOPS(l.ReadIOPS), emulate.FormatRate(l.ReadBPS),
		emulate.FormatIOPS(l.WriteIOPS), emulate.FormatRate(l.WriteBPS))
}

// describeDisk prints what a disk is and how it behaves, saying plainly
// when time is scaled.
func describeDisk(w io.Writer, d *emulate.Disk) {
	s := d.Spec
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "emulated disk\t%s\n", d.Name)
	if s.Profile != "" {
		fmt.Fprintf(tw, "profile\t%s\n", s.Profile)
	}
	dio := "direct IO on"
	if !d.DirectIO {
		dio = "direct IO OFF (the backing file's file system refused it)"
	}
	fmt.Fprintf(tw, "mount\t%s\n", d.Mount)
	where := "sparse"
	if s.RAM {
		where = "sparse, in RAM"
	}
	fmt.Fprintf(tw, "device\t%s (%s), %s %s %s, %s\n", d.Device, d.MajMin, s.FS, emulate.FormatBytes(float64(s.SizeBytes)), where, dio)
	fmt.Fprintf(tw, "throttle\tcgroup v%d %s\n", d.CgroupVersion, d.Cgroup)
	fmt.Fprintf(tw, "disk limits\t%s\n", limitsLine(s.Limits))
	if l := s.Latency; l != nil {
		fmt.Fprintf(tw, "latency\tread %s, write %s, flush %s (FUSE layer at %s)\n", distText(l.Read), distText(l.Write), distText(l.Flush), d.LatencyMount)
	}
	m := emulate.NewModel(s, time.Now())
	sc := s.Scale
	if sc <= 0 {
		sc = 1
	}
	if s.BurstIOPS > 0 || s.BurstBPS > 0 {
		start := "full"
		if s.StartEmpty {
			start = "empty"
		}
		var parts []string
		if s.BurstIOPS > 0 {
			parts = append(parts, fmt.Sprintf("%s for %.0f s", emulate.FormatIOPS(s.BurstIOPS), m.BurstSeconds(emulate.ResourceIOPS)))
		}
		if s.BurstBPS > 0 {
			parts = append(parts, fmt.Sprintf("%s for %.0f s", emulate.FormatRate(s.BurstBPS), m.BurstSeconds(emulate.ResourceBW)))
		}
		fmt.Fprintf(tw, "bursting\tto %s at full burst; bucket starts %s\n", strings.Join(parts, ", "), start)
	}
	switch s.Cache {
	case emulate.CacheReadOnly:
		fmt.Fprintf(tw, "cache\treadonly: reads at %s, %s (all hits)\n", emulate.FormatIOPS(s.CacheIOPS), emulate.FormatRate(s.CacheBPS))
	case emulate.CacheReadWrite:
		fmt.Fprintf(tw, "cache\treadwrite: IO at %s, %s until %s of writes wait for the disk, then 1 IOPS until drained\n",
			emulate.FormatIOPS(s.CacheIOPS), emulate.FormatRate(s.CacheBPS), emulate.FormatBytes(s.CacheBytes/sc))
	}
	if sc != 1 {
		fmt.Fprintf(tw, "TIME SCALED\tx%g: credit buckets and the cache are %g times smaller, so bursts, fills and drains last 1/%g as long; rates are real\n", sc, sc, sc)
	}
	fmt.Fprintf(tw, "events\t%s\n", d.EventLog)
	tw.Flush()
	if d.CgroupVersion == 1 {
		fmt.Fprintln(w, "note: cgroup v1 caps only IO a process submits itself (direct IO, reads); buffered writes are written back outside the cgroup, uncapped.")
	}
	if s.Profile != "" {
		if p, err := emulate.LookupProfile(s.Profile); err == nil {
			fmt.Fprintf(w, "note: latency of %s: %s.\n", s.Profile, p.LatencyNote)
		}
	}
	if s.Latency == nil {
		fmt.Fprintln(w, "note: no per-IO latency is added (the host's own); --latency adds it.")
	}
}

func distText(d emulate.Dist) string {
	if d.Zero() {
		return "none"
	}
	return d.String()
}

func newEmulateListCommand(streams IOStreams, stateDir func() string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List emulated disks",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			disks, err := emulate.List(stateDir())
			if output == "json" {
				var st []emulate.Status
				for _, d := range disks {
					st = append(st, d.Status())
				}
				if jerr := writeJSON(streams.Out, st); jerr != nil {
					return jerr
				}
				return err
			}
			if len(disks) == 0 && err == nil {
				fmt.Fprintf(streams.ErrOut, "no emulated disks in %s\n", stateDir())
				return nil
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPROFILE\tDEVICE\tCGROUP\tCONTROLLER\tSCALE\tMOUNT\tSTATE")
			for _, d := range disks {
				st := d.Status()
				state := "ok"
				if len(st.Broken) > 0 {
					state = strings.Join(st.Broken, ", ") + " (iolens emulate rm " + d.Name + ")"
				}
				prof := d.Spec.Profile
				if prof == "" {
					prof = "-"
				}
				sc := d.Spec.Scale
				if sc <= 0 {
					sc = 1
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\tv%d\t%s\tx%g\t%s\t%s\n", d.Name, prof, d.Device, d.CgroupVersion, st.Controller, sc, d.Mount, state)
			}
			tw.Flush()
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

func newEmulateStatusCommand(streams IOStreams, stateDir func() string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show an emulated disk's limits, credits and cache state",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := emulate.OpenIn(stateDir(), args[0])
			if err != nil {
				return err
			}
			st := d.Status()
			if output == "json" {
				return writeJSON(streams.Out, st)
			}
			describeDisk(streams.Out, d)
			fmt.Fprintf(streams.Out, "controller: %s", st.Controller)
			if d.ControllerPID > 0 {
				fmt.Fprintf(streams.Out, " (pid %d)", d.ControllerPID)
			}
			fmt.Fprintln(streams.Out)
			if m := st.Model; m != nil {
				fmt.Fprintf(streams.Out, "now (%s ago): %s\n", time.Since(m.UpdatedAt).Round(time.Second), limitsLine(m.Limits))
				if m.IOPSCredits != nil {
					fmt.Fprintf(streams.Out, "  IOPS credits %.0f of %.0f IOs (bursting: %v)\n", *m.IOPSCredits, *m.IOPSBucket, *m.IOPSBursting)
				}
				if m.BWCredits != nil {
					fmt.Fprintf(streams.Out, "  bandwidth credits %s of %s (bursting: %v)\n", emulate.FormatBytes(*m.BWCredits), emulate.FormatBytes(*m.BWBucket), *m.BWBursting)
				}
				if m.DirtyBytes != nil {
					fmt.Fprintf(streams.Out, "  write cache %s of %s waiting (stalled: %v)\n", emulate.FormatBytes(*m.DirtyBytes), emulate.FormatBytes(*m.CacheBytes), *m.Stalled)
				}
			}
			if len(st.Procs) > 0 {
				fmt.Fprintf(streams.Out, "processes in the cgroup: %v\n", st.Procs)
			}
			if len(st.Broken) > 0 {
				fmt.Fprintf(streams.Out, "BROKEN: %s; remove it with: iolens emulate rm %s\n", strings.Join(st.Broken, ", "), d.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

// exitStatusError carries a child's exit status out to main.
type exitStatusError struct {
	cmd  string
	code int
}

func (e *exitStatusError) Error() string {
	return fmt.Sprintf("%s exited with status %d", e.cmd, e.code)
}
func (e *exitStatusError) ExitStatus() int { return e.code }

func newEmulateExecCommand(streams IOStreams, stateDir func() string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec NAME -- CMD [ARGS...]",
		Short: "Run a command inside an emulated disk's cgroup, so its IO is capped",
		Long: `Run CMD in the emulated disk's cgroup: its IO to the disk is throttled.
The disk's mount point is in $IOLENS_EMULATE_MOUNT. The exit status is CMD's.`,
		Example: `  iolens emulate exec pg -- sh -c 'dd if=/dev/zero of=$IOLENS_EMULATE_MOUNT/f bs=1M count=500 oflag=direct'
  iolens emulate exec pg -- fio --name=r --directory=/var/lib/iolens/emulate/pg/mnt --rw=randread --bs=4k --size=1G --direct=1 --runtime=30 --time_based`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return &UsageError{Err: errors.New("put the command after --"), Help: "iolens emulate exec NAME -- CMD [ARGS...]"}
			}
			d, err := emulate.OpenIn(stateDir(), args[0])
			if err != nil {
				return err
			}
			if st := d.Status(); !st.CgroupOK || !st.Mounted {
				return &emulate.HintError{Err: fmt.Errorf("emulated disk %q is broken: %s", d.Name, strings.Join(st.Broken, ", ")),
					Help: "remove it with 'iolens emulate rm " + d.Name + "' and create it again"}
			}
			if st := d.Status(); st.Controller == "stopped" && d.Spec.Dynamic() {
				fmt.Fprintf(streams.ErrOut, "iolens: warning: %s's controller is not running: its caps stay as last set, with no bursting or cache changes (recreate it)\n", d.Name)
			}
			argv := append(d.CommandPrefix(), args[1:]...)
			c := exec.Command(argv[0], argv[1:]...)
			c.Stdin, c.Stdout, c.Stderr = streams.In, streams.Out, streams.ErrOut
			c.Env = append(os.Environ(), "IOLENS_EMULATE_MOUNT="+d.Mount, "IOLENS_EMULATE_NAME="+d.Name)
			// No context: a terminal's Ctrl-C reaches the command itself,
			// and it decides when to stop; we wait for it.
			err = c.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code := ee.ExitCode()
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					code = 128 + int(ws.Signal()) // as a shell reports it
				}
				return &exitStatusError{cmd: args[1], code: code}
			}
			return err
		},
	}
	return cmd
}

func newEmulateRmCommand(streams IOStreams, stateDir func() string) *cobra.Command {
	var all, force bool
	cmd := &cobra.Command{
		Use:     "rm NAME...|--all",
		Aliases: []string{"destroy"},
		Short:   "Remove emulated disks: controller, mount, loop device, cgroup and files",
		Long: `Remove emulated disks. Teardown is idempotent and also cleans up what a
crash left behind (a killed controller, a half-made disk). It refuses while
processes still run in a disk's cgroup unless --force, which kills them.`,
		Example: `  iolens emulate rm pg
  iolens emulate rm --all --force`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return &UsageError{Err: errors.New("give disk names or --all"), Help: "see 'iolens emulate rm --help'"}
			}
			// Teardown runs to the end even after Ctrl-C.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), 2*time.Minute)
			defer cancel()
			if all {
				removed, err := emulate.RemoveAll(ctx, stateDir(), force)
				for _, n := range removed {
					fmt.Fprintf(streams.Out, "removed %s\n", n)
				}
				return err
			}
			var errs []error
			for _, name := range args {
				d, err := emulate.OpenForRemoval(stateDir(), name)
				if err == nil {
					if force {
						err = d.ForceDestroy(ctx)
					} else {
						err = d.Destroy(ctx)
					}
				}
				if err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(streams.Out, "removed %s\n", name)
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "remove every emulated disk")
	cmd.Flags().BoolVar(&force, "force", false, "kill processes still in the disks' cgroups")
	return cmd
}

func newEmulateEventsCommand(streams IOStreams, stateDir func() string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "events NAME",
		Short: "Print an emulated disk's controller event log",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := emulate.OpenIn(stateDir(), args[0])
			if err != nil {
				return err
			}
			if output == "ndjson" {
				f, err := os.Open(d.EventLog)
				if err != nil {
					return err
				}
				defer f.Close()
				_, err = io.Copy(streams.Out, f)
				return err
			}
			evs, err := d.Events()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tT+S\tEVENT\tLIMITS\tDETAIL")
			for _, e := range evs {
				detail := e.Message
				if e.Credits != nil {
					detail = fmt.Sprintf("%s credits %.0f", e.Resource, *e.Credits)
				}
				if e.DirtyBytes != nil {
					detail = "cache waiting " + emulate.FormatBytes(*e.DirtyBytes)
				}
				fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%s\n", e.Time.Local().Format("15:04:05.000"), e.ElapsedS, e.Event, limitsLine(e.Limits()), detail)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or ndjson")
	return cmd
}

func newEmulateProfilesCommand(streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "profiles",
		Short: "List the cloud disk profiles 'emulate create --profile' knows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(streams.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "PROFILE\tIOPS\tBANDWIDTH\tBURST\tLATENCY\tSOURCE")
			for _, n := range emulate.Examples {
				p, err := emulate.LookupProfile(n)
				if err != nil {
					return err
				}
				burst := "-"
				switch {
				case p.BurstBPS > 0:
					burst = fmt.Sprintf("%s, %s for %.0f s", emulate.FormatIOPS(p.BurstIOPS), emulate.FormatRate(p.BurstBPS), p.BurstSeconds)
				case p.BurstIOPS > 0:
					burst = fmt.Sprintf("%s for %.0f s (%.3g IO credits)", emulate.FormatIOPS(p.BurstIOPS), p.BurstSeconds, p.BucketIOs)
				}
				lat := "-"
				if l := p.Latency; l != nil {
					lat = fmt.Sprintf("read %s, write %s", distText(l.Read), distText(l.Write))
				}
				fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\n", p.Name, p.IOPS, emulate.FormatRate(p.BPS), burst, lat, p.Source)
			}
			tw.Flush()
			fmt.Fprintln(streams.Out, "\nLatency: only where the provider publishes a typical figure (gcp:hyperdisk-throughput); elsewhere none is emulated: add --latency.")
			fmt.Fprintln(streams.Out, "\nAny disk of 'iolens catalog list' works too, at any size: aws:gp2:500GiB, gcp:pd-ssd:1TiB, azure:P30.")
			return nil
		},
	}
}

func newEmulateLatencyCommand(stateDir func() string) *cobra.Command {
	return &cobra.Command{
		Use:    "latency NAME",
		Short:  "Serve an emulated disk's latency layer (started by create)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return emulate.RunLatency(cmd.Context(), stateDir(), args[0])
		},
	}
}

func newEmulateControllerCommand(stateDir func() string) *cobra.Command {
	return &cobra.Command{
		Use:    "controller NAME",
		Short:  "Run an emulated disk's controller (started by create)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return emulate.RunController(cmd.Context(), stateDir(), args[0])
		},
	}
}

// emulatedTarget resolves 'run --emulated NAME': the directory to test
// (the disk's mount unless DIR is inside it) and the prefix that puts fio
// in the disk's cgroup.
func emulatedTarget(w io.Writer, name, dir, device string) (string, []string, error) {
	if device != "" {
		return "", nil, usageErr("--emulated tests a directory on the emulated disk, not --device")
	}
	d, err := emulate.Open(name)
	if err != nil {
		return "", nil, err
	}
	st := d.Status()
	if !st.Mounted || !st.CgroupOK {
		return "", nil, &emulate.HintError{Err: fmt.Errorf("emulated disk %q is broken: %s", name, strings.Join(st.Broken, ", ")),
			Help: "remove it with 'iolens emulate rm " + name + "' and create it again"}
	}
	note := fmt.Sprintf("iolens run: on emulated disk %s", name)
	if d.Spec.Profile != "" {
		note += " (" + d.Spec.Profile + ")"
	}
	if st.Controller == "stopped" {
		note += "; its controller is NOT running: caps stay as last set, no bursting or cache changes"
	}
	if sc := d.Spec.Scale; sc > 0 && sc != 1 {
		note += fmt.Sprintf("; TIME SCALED x%g: bursts, cache fills and drains last 1/%g as long", sc, sc)
	}
	fmt.Fprintln(w, note)
	if dir == "" {
		return d.Mount, d.CommandPrefix(), nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	if abs != d.Mount && !strings.HasPrefix(abs, d.Mount+"/") {
		return "", nil, usageErr("%s is not on emulated disk %q (mounted at %s)", dir, name, d.Mount)
	}
	return abs, d.CommandPrefix(), nil
}
