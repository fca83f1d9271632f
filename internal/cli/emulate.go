package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/report"
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

With --throttle-at device the caps are enforced inside the device instead,
as a cloud hypervisor does, where a cap over reads and writes together is
possible (--total-iops); --channels limits how many IOs the device serves
at once.

On the default cgroup throttle a cap covers one direction (the kernel has
no combined cap), and on cgroup v1 buffered writes are not capped: the
kernel's flusher threads write them back outside the cgroup; use direct
IO there.`,
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
		newEmulateProfilesCommand(streams), newEmulateDaemonCommand("controller NAME", "Run an emulated disk's controller (started by create)", dir, emulate.RunController),
		newEmulateDaemonCommand("latency NAME", "Serve an emulated disk's latency layer (started by create)", dir, emulate.RunLatency), newEmulateArmCommand(dir))
	return cmd
}

type emulateCreateOptions struct {
	emulate.SpecOptions
	output *format
}

// numberVar is a number flag (units.Number) with its default.
func numberVar(f *pflag.FlagSet, v *float64, name string, def, lo, hi float64, usage string) {
	*v = def
	f.Var(&units.Number{P: v, Min: lo, Max: hi}, name, usage)
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
A hit/miss value (hit=0.2ms,miss=8ms,hitratio=0.7, the ratio also as 70%)
is a cache in front of slower media: that share of IOs takes the hit
latency, the rest the miss latency. IOs wait out their latency side by
side: QD1 gets about 1/latency IOPS, deep queues still reach the caps.
--latency 0 adds the layer alone.

Inside the device: --channels N lets the device serve at most N IOs at
once, each holding its channel for its read or write latency: it
saturates near QD N at about N / mean latency IOPS, and past that the
latency grows in proportion to the queue depth while the rate varies as
the latencies drawn do (give a spread for a real device's variation).
--queue-growth G makes each IO take its latency x (1 + G x the IOs
already in the device), as a server that contends with itself: the rate
creeps up ever more slowly as the queue deepens while latency grows.
--server-cpu D spends D of CPU in the layer on each read and write, as a
local daemon does: past what the host's CPUs serve, they bind.
--throttle-at device enforces the caps inside the device, as a cloud
hypervisor does: a token bucket paces IOs in the device, so its queue
fills and await grows with QD while the rate stays flat. There
--total-iops and --total-bw cap reads and writes together, as cloud caps
are (a --profile's caps become such caps). The default, --throttle-at
cgroup, is the kernel's throttle above the device: IO waits before the
device and its queue stays short. The device throttle takes static caps
only (no bursting or host cache).

A failing disk: --read-errors FROM-TO fails reads of those bytes of the
device with EIO (unreadable sectors; writes there succeed); --down-every
5s --down-for 1s fails all IO for the last second of every 5. Both hold
once the disk is made; its ext4 has no journal and is mounted with
errors=continue, so that it outlives them.

A restored volume: --cold-read 17ms makes each --cold-block (64 KiB) slow
on its first read since the disk was armed; a written block is warm.
'iolens emulate arm NAME' makes every block cold again, after data was
written, as a fresh restore from a snapshot is.

--ram keeps the backing file in RAM. With no caps and no latency the
disk runs at memory speed: the CPU binds (fio's and the loop device's).`,
		Example: `  iolens emulate create p4 --profile azure:P4
  iolens emulate create seed003 --profile azure:P4 --cache readwrite
  iolens emulate create gp2 --profile aws:gp2:100GiB --scale 100
  iolens emulate create fixed --iops 500 --bw 20MB/s --fs xfs
  iolens emulate create net --iops 5000 --latency 2ms
  iolens emulate create etcd --iops 3000 --latency 1ms --flush-latency p50=2ms,p99=8ms
  iolens emulate create ssd --channels 4 --latency p50=0.2ms,p99=1ms
  iolens emulate create ebs --throttle-at device --total-iops 3000 --total-bw 125MB/s --latency 0.5ms
  iolens emulate create p30 --profile azure:P30 --throttle-at device --latency 2ms
  iolens emulate create cached --read-latency hit=0.2ms,miss=8ms,hitratio=0.7
  iolens emulate create badsect --read-errors 64MiB-1GiB --size 1G
  iolens emulate create flaky --down-every 5s --down-for 1s
  iolens emulate create restored --read-latency 1ms --cold-read 17ms
  iolens emulate create mem --ram --size 2G`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Set = cmd.Flags().Changed
			spec, err := o.Spec(args[0], stateDir())
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), streams, spec)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Size, "size", "4G", "backing file size (sparse), e.g. 4G")
	f.StringVar(&o.FS, "fs", "ext4", "file system: ext4 or xfs")
	numberVar(f, &o.IOPS, "iops", 0, 0, 1e9, "IOPS cap for reads and for writes")
	numberVar(f, &o.ReadIOPS, "read-iops", 0, 0, 1e9, "read IOPS cap")
	numberVar(f, &o.WriteIOPS, "write-iops", 0, 0, 1e9, "write IOPS cap")
	f.StringVar(&o.BW, "bw", "", "bandwidth cap for reads and for writes, e.g. 25MB/s")
	f.StringVar(&o.ReadBW, "read-bw", "", "read bandwidth cap")
	f.StringVar(&o.WriteBW, "write-bw", "", "write bandwidth cap")
	numberVar(f, &o.BurstIOPS, "burst-iops", 0, 0, 1e9, "burst IOPS while credits last")
	f.StringVar(&o.BurstBW, "burst-bw", "", "burst bandwidth while credits last")
	numberVar(f, &o.BurstSeconds, "burst-seconds", 0, 0, 1e9, "credit bucket size: seconds at the burst rate (before --scale)")
	numberVar(f, &o.BurstCredits, "burst-credits", 0, 0, 1e15, "IOPS credit bucket size in IOs (before --scale), instead of --burst-seconds")
	f.BoolVar(&o.StartEmpty, "start-empty", false, "start with an empty credit bucket")
	f.StringVar(&o.Profile, "profile", "", "cloud disk profile ('iolens emulate profiles' lists them); flags given override it")
	f.StringVar(&o.Cache, "cache", "none", "host cache: none, readonly or readwrite")
	f.StringVar(&o.CacheSize, "cache-size", "3G", "readwrite cache: written data it holds before it stalls (before --scale)")
	numberVar(f, &o.CacheIOPS, "cache-iops", emulate.DefaultCacheIOPS, 0, 1e9, "cache IOPS (default: Azure Standard_D8s_v3 cached limit)")
	f.StringVar(&o.CacheBW, "cache-bw", "128MB/s", "cache bandwidth (default: Azure Standard_D8s_v3 cached limit)")
	numberVar(f, &o.Scale, "scale", 1, 0, 1e6, "time scale: bucket and cache sizes are divided by it")
	f.StringVar(&o.Cgroup, "cgroup", "auto", "cgroup interface: auto, v1 or v2")
	o.output = formatFlag(f, report.Listings, "format: ")
	f.StringVar(&o.Latency, "latency", "", "least time of every read, write and flush: 2ms, 2ms±0.5ms or p50=1ms,p99=4ms")
	f.StringVar(&o.ReadLatency, "read-latency", "", "read latency (overrides --latency)")
	f.StringVar(&o.WriteLatency, "write-latency", "", "write latency (overrides --latency)")
	f.StringVar(&o.FlushLatency, "flush-latency", "", "flush (fsync) latency (overrides --latency)")
	f.BoolVar(&o.RAM, "ram", false, "keep the backing file in RAM (a tmpfs): the host's disk plays no part, memory is used for what is written")
	numberVar(f, &o.TotalIOPS, "total-iops", 0, 0, 1e9, "IOPS cap for reads and writes together (needs --throttle-at device)")
	f.StringVar(&o.TotalBW, "total-bw", "", "bandwidth cap for reads and writes together (needs --throttle-at device)")
	f.StringVar(&o.ThrottleAt, "throttle-at", string(emulate.ThrottleCgroup), "where the caps are enforced: cgroup (the kernel's throttle, above the device) or device (inside it, as a cloud hypervisor)")
	o.Channels = units.Count{Min: 0, Max: emulate.MaxChannels}
	f.Var(&o.Channels, "channels", "IOs the device serves at once, each for its latency (0: no limit)")
	f.StringVar(&o.ReadErrors, "read-errors", "", "a region of the device whose reads fail with EIO, as unreadable sectors: FROM-TO, e.g. 64MiB-1GiB")
	f.StringVar(&o.DownEvery, "down-every", "", "with --down-for: the device fails all IO for that long at the end of every such period, e.g. 5s")
	f.StringVar(&o.DownFor, "down-for", "", "how long the device fails all IO in each --down-every period, e.g. 1s")
	f.StringVar(&o.ColdRead, "cold-read", "", "each block's first read takes this much more, as on a volume restored from a snapshot, e.g. 17ms ('iolens emulate arm' makes every block cold again)")
	f.StringVar(&o.ColdBlock, "cold-block", "64KiB", "with --cold-read: the block fetched on first read")
	numberVar(f, &o.QueueGrowth, "queue-growth", 0, 0, 100, "each IO takes its latency x (1 + this x the IOs already in the device): a server that slows as its queue grows")
	f.StringVar(&o.ServerCPU, "server-cpu", "", "CPU time the latency layer spends on each read and write (e.g. 200us): a daemon whose CPU can bind")
	return cmd
}

func (o *emulateCreateOptions) run(ctx context.Context, streams IOStreams, spec emulate.Spec) error {
	// A reader that goes away (| head -1) must not kill create half way:
	// with SIGPIPE caught, writes to a closed pipe fail with EPIPE instead,
	// progress lines are then dropped, and a failed final write undoes the
	// disk like any other error of create. It stays caught until the
	// process ends, so that the error about it is not a SIGPIPE either.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	err := emulate.CreateAndHand(ctx, spec, func(step string) {
		if o.output.v == "text" && step != "done" {
			_, _ = fmt.Fprintf(streams.ErrOut, "create %s: %s\n", spec.Name, step)
		}
	}, func(d *emulate.Disk) error {
		// The whole output goes in one write: the disk is kept only if its
		// description reached the reader.
		var out bytes.Buffer
		if err := o.output.print(&out, d, func(w io.Writer) error {
			emulate.WriteDisk(w, d)
			_, err := fmt.Fprintf(w, "\nrun on it:   iolens emulate exec %s -- CMD...\n             iolens run --emulated %s\nremove it:   iolens emulate rm %s\n", d.Name, d.Name, d.Name)
			return err
		}); err != nil {
			return err
		}
		if _, err := streams.Out.Write(out.Bytes()); err != nil {
			return fmt.Errorf("writing the new disk's description: %w", err)
		}
		return nil
	})
	return err
}

func newEmulateListCommand(streams IOStreams, stateDir func() string) *cobra.Command {
	var output *format
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List emulated disks",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			disks, err := emulate.List(stateDir())
			if len(disks) == 0 && err == nil && output.v != "json" {
				fmt.Fprintf(streams.ErrOut, "no emulated disks in %s\n", stateDir())
				return nil
			}
			if perr := output.print(streams.Out, emulate.Statuses(disks), func(w io.Writer) error { emulate.WriteList(w, disks); return nil }); perr != nil {
				return perr
			}
			return err
		},
	}
	output = formatFlag(cmd.Flags(), report.Listings, "format: ")
	return cmd
}

func newEmulateArmCommand(stateDir func() string) *cobra.Command {
	return &cobra.Command{
		Use:   "arm NAME",
		Short: "Make every block of an emulated disk cold again (--cold-read), and start its faults over",
		Long: `Arm makes every block of a disk made with --cold-read slow on its next
first read, as a volume freshly restored from a snapshot is: write the
data first, then arm. A disk's --down-every periods count from here.`,
		Example: "  iolens emulate arm restored",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return emulate.ArmIn(stateDir(), args[0])
		},
	}
}

func newEmulateStatusCommand(streams IOStreams, stateDir func() string) *cobra.Command {
	var output *format
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
			return output.print(streams.Out, st, func(w io.Writer) error { emulate.WriteStatus(w, d, st); return nil })
		},
	}
	output = formatFlag(cmd.Flags(), report.Listings, "format: ")
	return cmd
}

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
			d, st, err := emulate.OpenUsable(stateDir(), args[0])
			if err != nil {
				return err
			}
			if st.Controller == "stopped" && d.Spec.Dynamic() {
				fmt.Fprintf(streams.ErrOut, "iolens: warning: %s's controller is not running: its caps stay as last set, with no bursting or cache changes (recreate it)\n", d.Name)
			}
			// The command's own output, unfiltered, on the very same
			// streams (a terminal stays its terminal).
			return d.Exec(args[1:], streams.In, passThrough(streams.Out), passThrough(streams.ErrOut))
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
			removed, err := emulate.Remove(cmd.Context(), stateDir(), args, force)
			for _, n := range removed {
				fmt.Fprintf(streams.Out, "removed %s\n", n)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "remove every emulated disk")
	cmd.Flags().BoolVar(&force, "force", false, "kill processes still in the disks' cgroups")
	return cmd
}

func newEmulateEventsCommand(streams IOStreams, stateDir func() string) *cobra.Command {
	var output *format
	cmd := &cobra.Command{
		Use:   "events NAME",
		Short: "Print an emulated disk's controller event log",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := emulate.OpenIn(stateDir(), args[0])
			if err != nil {
				return err
			}
			return output.write(streams.Out, report.Listing{Forms: map[string]func(io.Writer) error{"ndjson": d.CopyEventLog, "text": d.WriteEventLog}})
		},
	}
	output = formatFlag(cmd.Flags(), report.EventLogs, "format: ")
	return cmd
}

func newEmulateProfilesCommand(streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "profiles",
		Short: "List the cloud disk profiles 'emulate create --profile' knows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return emulate.WriteProfiles(streams.Out)
		},
	}
}

// newEmulateDaemonCommand is a hidden command create starts: a disk's
// latency layer or controller, as a daemon.
func newEmulateDaemonCommand(use, short string, stateDir func() string, run func(ctx context.Context, root, name string) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Hidden: true, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return run(cmd.Context(), stateDir(), args[0]) }}
}
