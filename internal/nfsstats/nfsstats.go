package nfsstats

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"

	"github.com/prometheus/procfs"
)

// Mount is one entry of mountstats: what is mounted where.
type Mount struct {
	Device     string `json:"device"`      // server:/export, //server/share
	MountPoint string `json:"mount_point"` // where it is mounted
	FSType     string `json:"fstype"`      // nfs, nfs4, cifs, smb3...
}

// NFS reports whether the kernel keeps client statistics for the mount.
func (m Mount) NFS() bool { return m.FSType == "nfs" || m.FSType == "nfs4" }

// SMB reports whether the mount is an SMB share.
func (m Mount) SMB() bool { return m.FSType == "cifs" || m.FSType == "smb3" }

// ErrNoClientStats is returned for a network share whose client keeps no
// per-mount statistics in mountstats (SMB).
var ErrNoClientStats = errors.New("no per-mount client statistics")

// Reader reads mountstats under a proc root.
type Reader struct {
	ProcRoot string // default /proc
	// PID whose mount namespace is read; 0 reads /proc/self.
	PID int
}

func (r Reader) mounts() ([]*procfs.Mount, error) {
	root := r.ProcRoot
	if root == "" {
		root = "/proc"
	}
	fs, err := procfs.NewFS(root)
	if err != nil {
		return nil, err
	}
	var p procfs.Proc
	if r.PID == 0 {
		p, err = fs.Self()
	} else {
		p, err = fs.Proc(r.PID)
	}
	if err != nil {
		return nil, err
	}
	ms, err := p.MountStats()
	if err != nil {
		return nil, &hint.Error{Err: fmt.Errorf("reading mountstats: %w", err), Advice: "mountstats is the kernel's; if it cannot be parsed, sample the share from the server side"}
	}
	return ms, nil
}

// Find returns the mount a path lives on: the entry whose mount point is
// the longest prefix of path (which should be absolute and free of
// symlinks). The last matching entry wins, as the kernel lists mounts in
// the order they were made and a later one hides an earlier one.
func (r Reader) Find(path string) (Mount, error) {
	ms, err := r.mounts()
	if err != nil {
		return Mount{}, err
	}
	path = filepath.Clean(path)
	var best *procfs.Mount
	for _, m := range ms {
		if under(path, m.Mount) && (best == nil || len(m.Mount) >= len(best.Mount)) {
			best = m
		}
	}
	if best == nil {
		return Mount{}, &hint.Error{Err: fmt.Errorf("%s is on no mount listed in mountstats", path), Advice: "give an absolute path"}
	}
	return Mount{Device: best.Device, MountPoint: best.Mount, FSType: best.Type}, nil
}

func under(path, mp string) bool {
	if mp == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == mp || strings.HasPrefix(path, mp+"/")
}

// Snapshot is one mount's counters at an instant.
type Snapshot struct {
	At    time.Time
	Mount Mount
	// Age is how long the mount has existed (the kernel's "age").
	Age   time.Duration
	Ops   map[string]procfs.NFSOperationStats
	Bytes procfs.NFSBytesStats
	// Transport sums the mount's RPC transports (nconnect opens several).
	Transport procfs.NFSTransportStats
}

// Snapshot reads the counters of the NFS mount at mountPoint.
func (r Reader) Snapshot(mountPoint string, now time.Time) (Snapshot, error) {
	ms, err := r.mounts()
	if err != nil {
		return Snapshot{}, err
	}
	var hit *procfs.Mount
	for _, m := range ms {
		if m.Mount == mountPoint {
			hit = m
		}
	}
	if hit == nil {
		return Snapshot{}, &hint.Error{Err: fmt.Errorf("%s is not in mountstats", mountPoint), Advice: "was the share unmounted? give its mount point"}
	}
	s := Snapshot{At: now, Mount: Mount{Device: hit.Device, MountPoint: hit.Mount, FSType: hit.Type}}
	st, ok := hit.Stats.(*procfs.MountStatsNFS)
	if !ok || st == nil {
		if s.Mount.SMB() {
			return s, &hint.Error{Err: fmt.Errorf("%s (%s): %w", mountPoint, s.Mount.FSType, ErrNoClientStats),
				Advice: "the kernel's SMB client keeps no per-mount statistics in mountstats; use the server's metrics, or run with --expect for the share's limits"}
		}
		return s, &hint.Error{Err: fmt.Errorf("%s (%s) is not an NFS mount", mountPoint, s.Mount.FSType), Advice: "sample block devices with diskstats instead"}
	}
	s.Age = st.Age
	s.Bytes = st.Bytes
	s.Ops = make(map[string]procfs.NFSOperationStats, len(st.Operations))
	for _, o := range st.Operations {
		s.Ops[o.Operation] = o
	}
	for _, t := range st.Transport {
		s.Transport.Sends += t.Sends
		s.Transport.Receives += t.Receives
		s.Transport.BadTransactionIDs += t.BadTransactionIDs
		s.Transport.CumulativeActiveRequests += t.CumulativeActiveRequests
		s.Transport.CumulativeBacklog += t.CumulativeBacklog
		s.Transport.CumulativeSendingQueue += t.CumulativeSendingQueue
		s.Transport.CumulativePendingQueue += t.CumulativePendingQueue
		s.Transport.MaximumRPCSlotsUsed = max(s.Transport.MaximumRPCSlotsUsed, t.MaximumRPCSlotsUsed)
		s.Transport.Connect += t.Connect
	}
	return s, nil
}

// OpRates are one NFS operation's figures over an interval.
type OpRates struct {
	Op string `json:"op"`
	// OpsPerSec counts completed requests.
	OpsPerSec float64 `json:"ops_per_sec"`
	// RTTMs is the mean time from sending a request to its reply
	// (network and server); ExecMs from queueing it to its completion
	// (what the application waited); QueueMs before it was sent.
	RTTMs   float64 `json:"rtt_ms"`
	ExecMs  float64 `json:"exec_ms"`
	QueueMs float64 `json:"queue_ms"`
	// Retrans counts transmissions beyond the first per request;
	// Timeouts major timeouts; Errors replies with an error status.
	Retrans  uint64 `json:"retrans"`
	Timeouts uint64 `json:"timeouts"`
	Errors   uint64 `json:"errors"`
	// SentBytesPerSec and RecvBytesPerSec include RPC headers.
	SentBytesPerSec float64 `json:"sent_bytes_per_sec"`
	RecvBytesPerSec float64 `json:"recv_bytes_per_sec"`
}

// Rates are a mount's figures over one interval.
type Rates struct {
	At    time.Time `json:"at"`
	Mount Mount     `json:"mount"`
	// Ops lists the operations that ran in the interval, busiest first.
	Ops []OpRates `json:"ops"`
	// ReadBytesPerSec and WriteBytesPerSec are the data moved from and to
	// the server (READ and WRITE payloads, page cache or direct).
	ReadBytesPerSec  float64 `json:"read_bytes_per_sec"`
	WriteBytesPerSec float64 `json:"write_bytes_per_sec"`
	// Retrans and Timeouts sum the operations'.
	Retrans  uint64 `json:"retrans"`
	Timeouts uint64 `json:"timeouts"`
	// BacklogAvg is the mean number of requests waiting for a transport
	// slot per request sent: above 0 the client, not the server, queues.
	BacklogAvg float64 `json:"backlog_avg"`
	// Remounted: the counters went back (the share was remounted); the
	// interval is empty.
	Remounted bool `json:"remounted,omitempty"`
}

// Op returns an operation's rates (zero when it did not run).
func (r Rates) Op(name string) OpRates {
	for _, o := range r.Ops {
		if o.Op == name {
			return o
		}
	}
	return OpRates{Op: name}
}

func delta(cur, prev uint64) uint64 {
	if cur < prev {
		return 0
	}
	return cur - prev
}

// Diff turns two snapshots of one mount into rates.
func Diff(prev, cur Snapshot) Rates {
	r := Rates{At: cur.At, Mount: cur.Mount}
	sec := cur.At.Sub(prev.At).Seconds()
	if sec <= 0 {
		return r
	}
	if cur.Age < prev.Age || cur.Transport.Sends < prev.Transport.Sends {
		r.Remounted = true
		return r
	}
	for name, c := range cur.Ops {
		p := prev.Ops[name]
		n := delta(c.Requests, p.Requests)
		if n == 0 {
			continue
		}
		o := OpRates{Op: name, OpsPerSec: float64(n) / sec,
			RTTMs:           float64(delta(c.CumulativeTotalResponseMilliseconds, p.CumulativeTotalResponseMilliseconds)) / float64(n),
			ExecMs:          float64(delta(c.CumulativeTotalRequestMilliseconds, p.CumulativeTotalRequestMilliseconds)) / float64(n),
			QueueMs:         float64(delta(c.CumulativeQueueMilliseconds, p.CumulativeQueueMilliseconds)) / float64(n),
			Timeouts:        delta(c.MajorTimeouts, p.MajorTimeouts),
			Errors:          delta(c.Errors, p.Errors),
			SentBytesPerSec: float64(delta(c.BytesSent, p.BytesSent)) / sec,
			RecvBytesPerSec: float64(delta(c.BytesReceived, p.BytesReceived)) / sec,
		}
		if t := delta(c.Transmissions, p.Transmissions); t > n {
			o.Retrans = t - n
		}
		r.Retrans += o.Retrans
		r.Timeouts += o.Timeouts
		r.Ops = append(r.Ops, o)
	}
	sort.Slice(r.Ops, func(i, j int) bool {
		if r.Ops[i].OpsPerSec != r.Ops[j].OpsPerSec {
			return r.Ops[i].OpsPerSec > r.Ops[j].OpsPerSec
		}
		return r.Ops[i].Op < r.Ops[j].Op
	})
	r.ReadBytesPerSec = float64(delta(cur.Bytes.ReadTotal, prev.Bytes.ReadTotal)) / sec
	r.WriteBytesPerSec = float64(delta(cur.Bytes.WriteTotal, prev.Bytes.WriteTotal)) / sec
	if s := delta(cur.Transport.Sends, prev.Transport.Sends); s > 0 {
		r.BacklogAvg = float64(delta(cur.Transport.CumulativeBacklog, prev.Transport.CumulativeBacklog)) / float64(s)
	}
	return r
}

// Sample snapshots the mount every interval until ctx ends and calls fn
// with the rates over each interval. It returns nil when ctx ends; a
// failing read ends sampling with its error.
func (r Reader) Sample(ctx context.Context, mountPoint string, interval time.Duration, fn func(Rates)) error {
	prev, err := r.Snapshot(mountPoint, time.Now())
	if err != nil {
		return err
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			cur, err := r.Snapshot(mountPoint, now)
			if err != nil {
				return err
			}
			fn(Diff(prev, cur))
			prev = cur
		}
	}
}

// Sample converts the rates over an interval to the record's form, at t
// seconds on the result's time axis.
func (r Rates) Sample(t float64) result.ClientSample {
	rd, wr := r.Op("READ"), r.Op("WRITE")
	return result.ClientSample{T: t, ReadOpsPerSec: rd.OpsPerSec, WriteOpsPerSec: wr.OpsPerSec,
		ReadBWBytes: r.ReadBytesPerSec, WriteBWBytes: r.WriteBytesPerSec,
		ReadRTTMs: rd.RTTMs, WriteRTTMs: wr.RTTMs, ReadExecMs: rd.ExecMs, WriteExecMs: wr.ExecMs,
		Retrans: r.Retrans, Timeouts: r.Timeouts, BacklogAvg: r.BacklogAvg}
}
