package fio

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// LogEntry is one row of a fio bw/iops/lat/clat/slat log:
// "time_ms, value, ddir, bs, [offset,] prio". Value is ns for latency logs,
// KiB/s for windowed bandwidth logs and IOs/s for windowed IOPS logs.
type LogEntry struct {
	TimeMs int64
	Value  float64
	// Dir is 0 read, 1 write, 2 trim.
	Dir int
	BS  int64
}

// ScanLog calls fn for every well-formed row of a fio log, streaming, so
// per-IO logs of any length use constant memory. Malformed rows are an
// error naming the line.
func ScanLog(r io.Reader, fn func(LogEntry) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if strings.TrimSpace(s) == "" {
			continue
		}
		e, err := parseLogLine(s)
		if err != nil {
			return fmt.Errorf("fio log line %d: %w", line, err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return sc.Err()
}

func parseLogLine(s string) (LogEntry, error) {
	var f [4]string
	n := 0
	for n < 4 {
		i := strings.IndexByte(s, ',')
		if i < 0 {
			f[n] = strings.TrimSpace(s)
			n++
			break
		}
		f[n] = strings.TrimSpace(s[:i])
		s = s[i+1:]
		n++
	}
	if n < 4 {
		return LogEntry{}, fmt.Errorf("want at least 4 comma-separated fields, got %d", n)
	}
	t, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || t < 0 {
		return LogEntry{}, fmt.Errorf("time %q: want milliseconds, 0 or more", f[0])
	}
	// fio writes whole numbers here; a NaN or an infinity would end up in
	// the result's series and make its JSON unwritable.
	v, err := strconv.ParseFloat(f[1], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return LogEntry{}, fmt.Errorf("value %q: want a finite number, 0 or more", f[1])
	}
	d, err := strconv.Atoi(f[2])
	if err != nil || d < 0 || d > 2 {
		return LogEntry{}, fmt.Errorf("direction %q: want 0, 1 or 2", f[2])
	}
	bs, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil || bs < 0 {
		return LogEntry{}, fmt.Errorf("block size %q: %w", f[3], err)
	}
	return LogEntry{TimeMs: t, Value: v, Dir: d, BS: bs}, nil
}
