package emulate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Event kinds written to a disk's event log.
const (
	EventStart      = "start"       // the controller began; carries the initial limits
	EventStop       = "stop"        // the controller ended (destroy, SIGTERM)
	EventLimits     = "limits"      // the throttle limits changed for another reason
	EventBurstStart = "burst-start" // credits allow the burst rate again
	EventBurstEnd   = "burst-end"   // the credit bucket ran dry: baseline rate from now on
	EventStallStart = "stall-start" // the write cache is full: IO gets almost nothing
	EventStallEnd   = "stall-end"   // the write cache has drained: IO runs at the cache's rate
)

// Resources a burst event refers to.
const (
	ResourceIOPS = "iops"
	ResourceBW   = "bw"
)

// Event is one line of the event log (NDJSON). Limit fields are the
// throttle values in force after the event, wherever the disk enforces
// them (its cgroup, or inside the device): IOs per second and bytes per
// second, 0 meaning no cap.
type Event struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"`
	// ElapsedS is seconds since the controller started.
	ElapsedS  float64 `json:"elapsed_s"`
	ReadIOPS  float64 `json:"read_iops"`
	WriteIOPS float64 `json:"write_iops"`
	ReadBPS   float64 `json:"read_bps"`
	WriteBPS  float64 `json:"write_bps"`
	// TotalIOPS and TotalBPS cap reads and writes together (a throttle
	// inside the device).
	TotalIOPS float64 `json:"total_iops,omitempty"`
	TotalBPS  float64 `json:"total_bps,omitempty"`
	// Resource is "iops" or "bw" on burst events: each has its own bucket.
	Resource string `json:"resource,omitempty"`
	// Credits left in that bucket: IOs for iops, bytes for bw.
	Credits *float64 `json:"credits,omitempty"`
	// DirtyBytes is the write cache's content not yet on the disk, on
	// stall events.
	DirtyBytes *float64 `json:"dirty_bytes,omitempty"`
	// Scale is the time scale the controller runs at (start events).
	Scale float64 `json:"scale,omitempty"`
	// Message says why, for start/stop events.
	Message string `json:"message,omitempty"`
}

// Limits returns the event's throttle values.
func (e Event) Limits() Limits {
	return Limits{ReadIOPS: e.ReadIOPS, WriteIOPS: e.WriteIOPS, ReadBPS: e.ReadBPS, WriteBPS: e.WriteBPS, TotalIOPS: e.TotalIOPS, TotalBPS: e.TotalBPS}
}

func (e *Event) setLimits(l Limits) {
	e.ReadIOPS, e.WriteIOPS, e.ReadBPS, e.WriteBPS = l.ReadIOPS, l.WriteIOPS, l.ReadBPS, l.WriteBPS
	e.TotalIOPS, e.TotalBPS = l.TotalIOPS, l.TotalBPS
}

// ReadEvents parses an event log. A torn last line (the controller killed
// mid-write) is ignored; any other bad line is an error.
func ReadEvents(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var pending error
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		if pending != nil {
			return out, pending
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			pending = fmt.Errorf("event log line %d: %w", line, err)
			continue
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// ReadEventFile reads the event log at path.
func ReadEventFile(path string) ([]Event, error) {
	f, err := openRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadEvents(f)
}

// eventLog appends events, one write per line so readers never see
// a partial object except after a crash.
type eventLog struct {
	mu sync.Mutex
	f  *os.File
}

func openEventLog(path string) (*eventLog, error) {
	f, err := openRegular(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &eventLog{f: f}, nil
}

func (l *eventLog) write(e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.f.Write(append(b, '\n'))
	return err
}

func (l *eventLog) Close() error { return l.f.Close() }

// Span is a time interval of the event log.
type Span struct{ Start, End time.Time }

// Stalls returns the complete stalls of an event log (a stall-start
// followed by its stall-end), in order; a stall still open at the end of
// the log is left out.
func Stalls(evs []Event) []Span {
	var out []Span
	var open *time.Time
	for _, e := range evs {
		switch e.Event {
		case EventStallStart:
			at := e.Time
			open = &at
		case EventStallEnd:
			if open != nil {
				out = append(out, Span{*open, e.Time})
			}
			open = nil
		}
	}
	return out
}
