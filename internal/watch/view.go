package watch

import (
	"fmt"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// FindingLine is one line of the findings log, empty for other records.
func FindingLine(r result.WatchRecord) string {
	if r.Type != result.WatchTypeFinding || r.Finding == nil {
		return ""
	}
	f := r.Finding
	dev := f.Device
	if dev == "" {
		dev = "host"
	}
	return fmt.Sprintf("%s  %-6s %-4s %s", r.Time.Local().Format("15:04:05"), dev, sevMark(f.Severity), f.Summary)
}

func sevMark(s string) string {
	switch s {
	case "fail":
		return "FAIL"
	case "warn":
		return "WARN"
	}
	return "info"
}

// View is the model of the live terminal view: one row per device, the
// host's state, the heaviest cgroups and the findings log. It lays the
// view out as lines; drawing them on a terminal is the caller's.
type View struct {
	// w says what each device is expected to be, and which devices are
	// watched: both change as the node's volumes come and go.
	w     *Watcher
	last  *result.WatchRecord
	log   []string
	start time.Time
}

// NewView is the view of w's records.
func NewView(w *Watcher) *View { return &View{w: w} }

// Add takes one record, and reports whether the view should be redrawn
// (findings are drawn with the next sample).
func (v *View) Add(r result.WatchRecord) bool {
	switch r.Type {
	case result.WatchTypeStart:
		v.start = r.Time
	case result.WatchTypeSample:
		v.last = &r
	case result.WatchTypeFinding:
		v.log = append(v.log, FindingLine(r))
		if len(v.log) > 1000 {
			v.log = v.log[len(v.log)-1000:]
		}
		return false
	}
	return true
}

// Log is the findings log, oldest first (the newest 1000).
func (v *View) Log() []string { return v.log }

// Render lays the view out for a terminal of wd x ht.
func (v *View) Render(wd, ht int) []string {
	var lines []string
	now := time.Now()
	if v.last != nil {
		now = v.last.Time
	}
	head := fmt.Sprintf("iolens watch  %s", now.Local().Format("15:04:05"))
	if v.last != nil && v.last.System != nil {
		s := v.last.System
		head += fmt.Sprintf("   iowait %.1f%%", s.IowaitPct)
		if v.last.IOPressurePct != nil {
			head += fmt.Sprintf("   IO pressure %.0f%%", *v.last.IOPressurePct)
		}
		head += fmt.Sprintf("   Dirty %s   Writeback %s", units.HumanBytes(float64(s.DirtyBytes)), units.HumanBytes(float64(s.WritebackBytes)))
	}
	lines = append(lines, head, "")
	hdr := fmt.Sprintf("%-10s %-9s %8s %8s %7s %7s %7s %7s %6s %8s %8s %6s", "DEVICE", "STATE", "r/s", "w/s", "rMB/s", "wMB/s",
		"r_await", "w_await", "aqu-sz", "rareq-sz", "wareq-sz", "%util")
	expected := false
	for _, d := range v.w.Devices() {
		expected = expected || v.w.CeilingOf(d.Name) != nil
	}
	if expected {
		hdr += fmt.Sprintf(" %6s %7s", "%ceil", "credit")
	}
	hdr += "  TOP"
	lines = append(lines, hdr)
	parallel := map[string]bool{}
	anyParallel := false
	for _, d := range v.w.Devices() {
		parallel[d.Name] = d.Parallel
		anyParallel = anyParallel || d.Parallel
	}
	var burst []string
	if v.last != nil {
		for _, d := range v.last.Devices {
			util := fmt.Sprintf("%5.1f", d.UtilPct)
			if parallel[d.Device] {
				util += "~"
			} else {
				util += " "
			}
			row := fmt.Sprintf("%-10s %-9s %8.1f %8.1f %7.2f %7.2f %7.2f %7.2f %6.2f %8s %8s %6s", d.Device, d.State,
				d.ReadIOPS, d.WriteIOPS, d.ReadBWBytes/1e6, d.WriteBWBytes/1e6, d.ReadAwaitMs, d.WriteAwaitMs, d.QueueSize,
				units.KiB(d.ReadReqBytes), units.KiB(d.WriteReqBytes), util)
			if expected {
				c, cr := "-", "-"
				if d.CeilingPct != nil {
					c = fmt.Sprintf("%.0f%%", *d.CeilingPct)
				}
				if d.BurstCreditPct != nil {
					cr = fmt.Sprintf("%.0f%%", *d.BurstCreditPct)
				}
				row += fmt.Sprintf(" %6s %7s", c, cr)
				if m := Message(v.w.CeilingOf(d.Device), d); m != "" {
					burst = append(burst, d.Device+": "+m)
				}
			}
			row += "  " + d.TopCgroup
			lines = append(lines, clip(row, wd))
		}
	}
	if anyParallel {
		lines = append(lines, "~ parallel device: utilization does not show saturation; watch aqu-sz and await")
	}
	lines = append(lines, burst...)
	lines = append(lines, EtcdLines(v.last, wd)...)
	if v.last != nil && len(v.last.Top) > 0 {
		lines = append(lines, "", fmt.Sprintf("%-10s %9s %9s %8s %8s  %s", "DEVICE", "rMB/s", "wMB/s", "r/s", "w/s", "CGROUP (pod or process)"))
		for _, c := range v.last.Top {
			who := c.Name()
			if who != c.Cgroup {
				who += "  " + c.Cgroup
			}
			dev := c.Device
			if dev == "" {
				dev = "(all)" // attributed per process, not per device
			}
			lines = append(lines, clip(fmt.Sprintf("%-10s %9.2f %9.2f %8.1f %8.1f  %s", dev, c.ReadBWBytes/1e6, c.WriteBWBytes/1e6, c.ReadIOPS, c.WriteIOPS, who), wd))
		}
	}
	lines = append(lines, "", "FINDINGS")
	room := ht - len(lines) - 1
	logs := v.log
	if room < 1 {
		room = 1
	}
	if len(logs) > room {
		logs = logs[len(logs)-room:]
	}
	if len(logs) == 0 {
		lines = append(lines, "(none yet)")
	}
	for _, l := range logs {
		lines = append(lines, clip(l, wd))
	}
	return lines
}

// EtcdLines are the live view's rows for the etcd members.
func EtcdLines(r *result.WatchRecord, wd int) []string {
	if r == nil || len(r.Etcd) == 0 {
		return nil
	}
	lines := []string{"", fmt.Sprintf("%-28s %9s %8s %-22s %s", "ETCD", "WINDOW", "FSYNCS", "WAL FSYNC P99", "VERDICT")}
	for _, e := range r.Etcd {
		p99 := "-"
		switch {
		case e.P99LowerNs != nil && e.P99UpperNs == nil:
			p99 = "> " + units.Latency(*e.P99LowerNs)
		case e.P99Ns != nil && e.P99LowerNs != nil:
			// The bucket bounds the p99 lies between, in ms as etcd's buckets are.
			p99 = units.Ms(*e.P99Ns/1e9, 3) + " (" + units.Trim(*e.P99LowerNs/1e6, 3) + "-" + units.Trim(*e.P99UpperNs/1e6, 3) + ")"
		}
		verdict := strings.ToUpper(e.Verdict)
		if e.Error != "" {
			verdict += ": " + e.Error
		}
		lines = append(lines, clip(fmt.Sprintf("%-28s %8.0fs %8.0f %-22s %s", e.Endpoint, e.WindowS, e.Fsyncs, p99, verdict), wd))
	}
	return lines
}

func clip(s string, wd int) string {
	if wd > 0 && len(s) > wd {
		return s[:wd]
	}
	return s
}
