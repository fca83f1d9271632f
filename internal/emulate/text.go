package emulate

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// LimitsLine is a disk's caps on one line.
func LimitsLine(l Limits) string {
	line := fmt.Sprintf("read %s, %s; write %s, %s", units.FormatIOPS(l.ReadIOPS), units.FormatRate(l.ReadBPS),
		units.FormatIOPS(l.WriteIOPS), units.FormatRate(l.WriteBPS))
	if l.TotalIOPS > 0 || l.TotalBPS > 0 {
		line += fmt.Sprintf("; reads and writes together %s, %s", units.FormatIOPS(l.TotalIOPS), units.FormatRate(l.TotalBPS))
	}
	return line
}

// WriteDisk writes what a disk is and how it behaves, saying plainly
// when time is scaled.
func WriteDisk(w io.Writer, d *Disk) {
	s := d.Spec
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "emulated disk\t%s\n", d.Name)
	if s.Profile != "" {
		fmt.Fprintf(tw, "profile\t%s\n", s.Profile)
	}
	dio := "direct IO on"
	switch {
	case !d.DirectIO && s.RAM && s.Latency == nil:
		dio = "through the tmpfs's page cache (memory speed: the CPU binds)"
	case !d.DirectIO:
		dio = "direct IO OFF (the backing file's file system refused it)"
	}
	fmt.Fprintf(tw, "mount\t%s\n", d.Mount)
	where := "sparse"
	if s.RAM {
		where = "sparse, in RAM"
	}
	fmt.Fprintf(tw, "device\t%s (%s), %s %s %s, %s\n", d.Device, d.MajMin, s.FS, units.HumanBytes(float64(s.SizeBytes)), where, dio)
	if s.ThrottleAt == ThrottleDevice {
		fmt.Fprintf(tw, "throttle\tinside the device (token buckets in the FUSE layer): IO waits in the device's queue; cgroup v%d %s has no caps\n", d.CgroupVersion, d.Cgroup)
	} else {
		fmt.Fprintf(tw, "throttle\tcgroup v%d %s (above the device)\n", d.CgroupVersion, d.Cgroup)
	}
	fmt.Fprintf(tw, "disk limits\t%s\n", LimitsLine(s.Limits))
	if l := s.Latency; l != nil {
		fmt.Fprintf(tw, "latency\tread %s, write %s, flush %s (FUSE layer at %s)\n", distText(l.Read), distText(l.Write), distText(l.Flush), d.LatencyMount)
		if s.Channels > 0 {
			fmt.Fprintf(tw, "channels\t%d: at most %d IOs served at once; saturates near QD%d at about %s reads or %s writes\n",
				s.Channels, s.Channels, s.Channels, channelRate(s.Channels, l.Read), channelRate(s.Channels, l.Write))
		}
		if s.QueueGrowth > 0 {
			fmt.Fprintf(tw, "queue growth	each IO takes its latency x (1 + %g x the IOs already in the device)\n", s.QueueGrowth)
		}
		if s.ServerCPU > 0 {
			fmt.Fprintf(tw, "server CPU	%v of CPU per read or write in the FUSE layer\n", s.ServerCPU)
		}
	}
	m := NewModel(s, time.Now())
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
			parts = append(parts, fmt.Sprintf("%s for %.0f s", units.FormatIOPS(s.BurstIOPS), m.BurstSeconds(ResourceIOPS)))
		}
		if s.BurstBPS > 0 {
			parts = append(parts, fmt.Sprintf("%s for %.0f s", units.FormatRate(s.BurstBPS), m.BurstSeconds(ResourceBW)))
		}
		fmt.Fprintf(tw, "bursting\tto %s at full burst; bucket starts %s\n", strings.Join(parts, ", "), start)
	}
	switch s.Cache {
	case CacheReadOnly:
		fmt.Fprintf(tw, "cache\treadonly: reads at %s, %s (all hits)\n", units.FormatIOPS(s.CacheIOPS), units.FormatRate(s.CacheBPS))
	case CacheReadWrite:
		fmt.Fprintf(tw, "cache\treadwrite: IO at %s, %s until %s of writes wait for the disk, then 1 IOPS until drained\n",
			units.FormatIOPS(s.CacheIOPS), units.FormatRate(s.CacheBPS), units.HumanBytes(s.CacheBytes/sc))
		if cf, ok := CachePrediction(s, 1<<20); ok {
			fmt.Fprintf(tw, "\t1 MiB writes (the limits arithmetic): %s\n", cf.Sentence())
		}
	}
	if sc != 1 {
		fmt.Fprintf(tw, "TIME SCALED\tx%g: credit buckets and the cache are %g times smaller, so bursts, fills and drains last 1/%g as long; rates are real\n", sc, sc, sc)
	}
	fmt.Fprintf(tw, "events\t%s\n", d.EventLog)
	tw.Flush()
	if d.CgroupVersion == 1 && s.ThrottleAt != ThrottleDevice {
		fmt.Fprintln(w, "note: cgroup v1 caps only IO a process submits itself (direct IO, reads); buffered writes are written back outside the cgroup, uncapped.")
	}
	if s.Profile != "" {
		if p, err := LookupProfile(s.Profile); err == nil {
			switch {
			case s.Latency != nil && p.Latency == nil:
				fmt.Fprintf(w, "note: latency of %s: the provider publishes no typical figure; the latency given (--latency) is emulated.\n", s.Profile)
			case s.Latency != nil && !reflect.DeepEqual(*s.Latency, *p.Latency):
				fmt.Fprintf(w, "note: latency of %s: %s; the latency given (--latency) is emulated instead.\n", s.Profile, p.LatencyNote)
			default:
				fmt.Fprintf(w, "note: latency of %s: %s.\n", s.Profile, p.LatencyNote)
			}
		}
	}
	switch {
	case s.Latency == nil && s.RAM:
		fmt.Fprintln(w, "note: a RAM disk with no latency layer: IO runs at memory speed, so the CPU (fio's and the loop device's) is the limit.")
	case s.Latency == nil:
		fmt.Fprintln(w, "note: no per-IO latency is added (the host's own); --latency adds it.")
	}
}

// channelRate is what n channels serve at most with latency d.
func channelRate(n int, d Dist) string {
	if d.Zero() {
		return "any rate"
	}
	return units.FormatIOPS(float64(n) / d.Mean().Seconds())
}

func distText(d Dist) string {
	if d.Zero() {
		return "none"
	}
	return d.String()
}

// WriteList writes a table of disks: what each is and whether it is
// broken.
func WriteList(w io.Writer, disks []*Disk) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
}

// WriteStatus writes what d is (WriteDisk), then its state st: the
// controller, the model's credits and cache, and what is broken.
func WriteStatus(w io.Writer, d *Disk, st Status) {
	WriteDisk(w, d)
	fmt.Fprintf(w, "controller: %s", st.Controller)
	if d.ControllerPID > 0 {
		fmt.Fprintf(w, " (pid %d)", d.ControllerPID)
	}
	fmt.Fprintln(w)
	if m := st.Model; m != nil {
		fmt.Fprintf(w, "now (%s ago): %s\n", time.Since(m.UpdatedAt).Round(time.Second), LimitsLine(m.Limits))
		if m.IOPSCredits != nil {
			fmt.Fprintf(w, "  IOPS credits %.0f of %.0f IOs (bursting: %v)\n", *m.IOPSCredits, *m.IOPSBucket, *m.IOPSBursting)
		}
		if m.BWCredits != nil {
			fmt.Fprintf(w, "  bandwidth credits %s of %s (bursting: %v)\n", units.HumanBytes(*m.BWCredits), units.HumanBytes(*m.BWBucket), *m.BWBursting)
		}
		if m.DirtyBytes != nil {
			fmt.Fprintf(w, "  write cache %s of %s waiting (stalled: %v)\n", units.HumanBytes(*m.DirtyBytes), units.HumanBytes(*m.CacheBytes), *m.Stalled)
		}
	}
	if len(st.Procs) > 0 {
		fmt.Fprintf(w, "processes in the cgroup: %v\n", st.Procs)
	}
	if len(st.Broken) > 0 {
		fmt.Fprintf(w, "BROKEN: %s; remove it with: iolens emulate rm %s\n", strings.Join(st.Broken, ", "), d.Name)
	}
}

// WriteEvents writes a controller's event log as a table.
func WriteEvents(w io.Writer, evs []Event) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tT+S\tEVENT\tLIMITS\tDETAIL")
	for _, e := range evs {
		detail := e.Message
		if e.Credits != nil {
			detail = fmt.Sprintf("%s credits %.0f", e.Resource, *e.Credits)
		}
		if e.DirtyBytes != nil {
			detail = "cache waiting " + units.HumanBytes(*e.DirtyBytes)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%s\n", e.Time.Local().Format("15:04:05.000"), e.ElapsedS, e.Event, LimitsLine(e.Limits()), detail)
	}
	return tw.Flush()
}

// WriteProfiles writes the table of the profiles 'emulate create
// --profile' knows (Examples), with where their figures come from.
func WriteProfiles(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tIOPS\tBANDWIDTH\tBURST\tLATENCY\tSOURCE")
	for _, n := range Examples {
		p, err := LookupProfile(n)
		if err != nil {
			return err
		}
		burst := "-"
		switch {
		case p.BurstBPS > 0:
			burst = fmt.Sprintf("%s, %s for %.0f s", units.FormatIOPS(p.BurstIOPS), units.FormatRate(p.BurstBPS), p.BurstSeconds)
		case p.BurstIOPS > 0:
			burst = fmt.Sprintf("%s for %.0f s (%.3g IO credits)", units.FormatIOPS(p.BurstIOPS), p.BurstSeconds, p.BucketIOs)
		}
		lat := "-"
		if l := p.Latency; l != nil {
			lat = fmt.Sprintf("read %s, write %s", distText(l.Read), distText(l.Write))
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\n", p.Name, p.IOPS, units.FormatRate(p.BPS), burst, lat, p.Source)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nLatency: only where the provider publishes a typical figure (gcp:hyperdisk-throughput); elsewhere none is emulated: add --latency.")
	fmt.Fprintln(w, "\nAny disk of 'iolens catalog list' works too, at any size: aws:gp2:500GiB, gcp:pd-ssd:1TiB, azure:P30.")
	return nil
}
