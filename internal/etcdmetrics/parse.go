package etcdmetrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/iolens/iolens/internal/termtext"
)

// The metrics read, as etcd names them (etcd 3.1 and later).
const (
	// WALFsyncMetric: the time of each fdatasync of the write-ahead log,
	// which every raft entry waits for before it is acknowledged.
	WALFsyncMetric = "etcd_disk_wal_fsync_duration_seconds"
	// BackendCommitMetric: the time of each commit of the bbolt backend,
	// periodic (every 100 ms by default) and on snapshots.
	BackendCommitMetric = "etcd_disk_backend_commit_duration_seconds"

	startTimeMetric = "process_start_time_seconds"
	versionMetric   = "etcd_server_version"
	idMetric        = "etcd_server_id"
	leaderMetric    = "etcd_server_is_leader"
)

// Snapshot is what one scrape of a member's /metrics says.
type Snapshot struct {
	// Time is when the scrape's answer arrived (zero from Parse).
	Time          time.Time
	WALFsync      Histogram
	BackendCommit Histogram
	// StartTime is the process's start (process_start_time_seconds);
	// zero when the member does not export it.
	StartTime time.Time
	// Version is etcd_server_version's server_version label (etcd 3.3
	// and later), MemberID etcd_server_id's server_id (3.4 and later).
	Version  string
	MemberID string
	// Leader is etcd_server_is_leader, nil when absent.
	Leader *bool
}

// FormatError means the body is not the Prometheus text format.
type FormatError struct{ Err error }

func (e *FormatError) Error() string {
	return "not the Prometheus text exposition format: " + e.Err.Error()
}
func (e *FormatError) Unwrap() error { return e.Err }

// NotEtcdError means the body is valid metrics, but not a usable etcd
// member's: the disk histograms are missing, or are not histograms.
type NotEtcdError struct {
	// Reason says what is missing or wrong.
	Reason string
	// OtherEtcd is true when some etcd_ metric is there.
	OtherEtcd bool
}

func (e *NotEtcdError) Error() string { return e.Reason }

// Parse reads one /metrics body in the Prometheus text format. It keeps
// only what the package judges; the rest of the page is parsed and
// dropped. The caller bounds r's size: the parser holds the whole page.
func Parse(r io.Reader) (*Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, &FormatError{Err: err}
	}
	s := &Snapshot{}
	for _, m := range []struct {
		name string
		h    *Histogram
	}{{WALFsyncMetric, &s.WALFsync}, {BackendCommitMetric, &s.BackendCommit}} {
		h, err := histogramOf(fams, m.name)
		if err != nil {
			return nil, err
		}
		*m.h = h
	}
	if v, ok := single(fams[startTimeMetric]); ok && v > 0 && v < 1e11 {
		sec, frac := math.Modf(v)
		s.StartTime = time.Unix(int64(sec), int64(frac*1e9)).UTC()
	}
	s.Version = labelOf(fams[versionMetric], "server_version")
	s.MemberID = labelOf(fams[idMetric], "server_id")
	if v, ok := single(fams[leaderMetric]); ok {
		l := v == 1
		s.Leader = &l
	}
	return s, nil
}

func histogramOf(fams map[string]*dto.MetricFamily, name string) (Histogram, error) {
	mf := fams[name]
	if mf == nil {
		return Histogram{}, notEtcd(fams, name)
	}
	if t := mf.GetType(); t != dto.MetricType_HISTOGRAM {
		return Histogram{}, &NotEtcdError{OtherEtcd: true, Reason: fmt.Sprintf("%s is a %s, not a histogram", name, strings.ToLower(t.String()))}
	}
	if n := len(mf.GetMetric()); n != 1 {
		return Histogram{}, &NotEtcdError{OtherEtcd: true, Reason: fmt.Sprintf("%s has %d series; one member's own /metrics has one "+
			"(a federating or aggregating endpoint adds labels: scrape each member directly)", name, n)}
	}
	h, err := fromDTO(mf.GetMetric()[0].GetHistogram())
	if err != nil {
		return Histogram{}, fmt.Errorf("%s: %w", name, err)
	}
	return h, nil
}

// notEtcd explains a missing histogram: another program's metrics, or an
// etcd without it.
func notEtcd(fams map[string]*dto.MetricFamily, name string) error {
	if b, ok := fams[name+"_bucket"]; ok {
		return &NotEtcdError{OtherEtcd: true, Reason: fmt.Sprintf("%s_bucket is a metric of its own (%s), not a histogram's buckets: the page lacks '# TYPE %s histogram'",
			name, strings.ToLower(b.GetType().String()), name)}
	}
	var etcd []string
	for n := range fams {
		if strings.HasPrefix(n, "etcd_") {
			etcd = append(etcd, n)
		}
	}
	if len(etcd) == 0 {
		return &NotEtcdError{Reason: fmt.Sprintf("no etcd metrics among the %d metric families: not an etcd member's /metrics", len(fams))}
	}
	sort.Strings(etcd)
	return &NotEtcdError{OtherEtcd: true, Reason: fmt.Sprintf("%s is missing, though %d etcd metrics are there (%s...): an etcd older than 3.1, or a proxy (etcd grpc-proxy, gateway)",
		name, len(etcd), etcd[0])}
}

// single is the value of a family with one gauge or untyped series.
func single(mf *dto.MetricFamily) (float64, bool) {
	if mf == nil || len(mf.GetMetric()) != 1 {
		return 0, false
	}
	m := mf.GetMetric()[0]
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.GetGauge().GetValue()
	case m.Untyped != nil:
		v = m.GetUntyped().GetValue()
	case m.Counter != nil:
		v = m.GetCounter().GetValue()
	default:
		return 0, false
	}
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// labelOf is the label of an info-style gauge (value 1), bounded in
// length: it is printed.
func labelOf(mf *dto.MetricFamily, label string) string {
	if mf == nil || len(mf.GetMetric()) != 1 {
		return ""
	}
	for _, lp := range mf.GetMetric()[0].GetLabel() {
		if lp.GetName() == label {
			return printable(lp.GetValue(), 64)
		}
	}
	return ""
}

// printable keeps a label value from a hostile page safe to print on a
// terminal: no control characters, at most n bytes.
func printable(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= n {
			break
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || !termtext.IsLine(string(r)) {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}
