package watch

import (
	"errors"
	"time"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/result"
)

// Replay runs a watch's state machine and detectors over intervals
// measured elsewhere: another host's counters, as Prometheus's node
// exporter recorded them. It logs the same states and findings (stalls,
// saturation, the expected ceiling, cliffs, writeback storms) a live
// watch of that host would have, from the same code.
type Replay struct {
	w *Watcher
}

// NewReplay prepares a replay of devs. Of cfg, the sampling fields
// (ProcRoot, SysRoot, Devices, Mounts, Discover, Cgroups, Top, Etcd) play
// no part: there is nothing to read.
func NewReplay(cfg Config, devs []result.WatchDeviceInfo) (*Replay, error) {
	if len(devs) == 0 {
		return nil, ErrNoDevices
	}
	if cfg.Interval <= 0 {
		return nil, errors.New("watch: a replay needs the interval of its samples")
	}
	if cfg.Th == (Thresholds{}) {
		cfg.Th = DefaultThresholds()
	}
	if cfg.Detectors == nil {
		cfg.Detectors = CliffDetectors(cfg.Interval)
	}
	cfg.Discover, cfg.Cgroups, cfg.Etcd, cfg.Top = nil, nil, nil, 0
	w := build(cfg, devs)
	// History has no /sys to say what sits on what: by name, a stacked
	// device's IO is the other devices' twice over.
	w.family = map[string]map[string]bool{}
	for _, a := range devs {
		w.family[a.Name] = map[string]bool{}
		for _, b := range devs {
			if b.Name != a.Name && diskstats.Stacked(b.Name) {
				w.family[a.Name][b.Name] = true
			}
		}
	}
	w.throttle = newThrottles(nil, "", w.majmin)
	return &Replay{w: w}, nil
}

// Start begins the replay at the instant of its first counters and
// returns the start record.
func (r *Replay) Start(at time.Time) result.WatchRecord {
	w := r.w
	w.start, w.started = at, true
	return w.startRecord(at)
}

// Step takes the interval of length dt that ended at tk.At, with its
// device rates and host-wide state, and returns its sample record
// followed by the findings it produced. pressurePct is the share of the
// interval in which some task waited on IO, -1 when unknown.
func (r *Replay) Step(tk diskstats.Tick, dt time.Duration, pressurePct float64) ([]result.WatchRecord, error) {
	w := r.w
	if !w.started {
		return nil, errors.New("watch: Step before Start")
	}
	if dt <= 0 {
		return nil, errors.New("watch: an interval must have a length")
	}
	host := Host{IowaitPct: tk.System.IowaitPct, DirtyBytes: tk.System.DirtyBytes, WritebackBytes: tk.System.WritebackBytes,
		PressurePct: pressurePct, OtherUtilPct: tk.System.OtherUtilPct}
	return w.step(tk.At, tk.At.Sub(w.start).Seconds(), dt.Seconds(), tk, host, nil), nil
}

// Flush closes what the detectors still hold when the replay ends at.
func (r *Replay) Flush(at time.Time) []result.WatchRecord { return r.w.Flush(at) }
