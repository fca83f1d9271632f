package kernlog

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// FS locates the kernel's files: "" is the host's /dev and /sys.
type FS struct {
	Dev, Sys string
}

func (fs FS) dev() string {
	if fs.Dev == "" {
		return "/dev"
	}
	return fs.Dev
}

func (fs FS) sys() string {
	if fs.Sys == "" {
		return "/sys"
	}
	return fs.Sys
}

// Bounds on what is read and kept: the kernel's ring buffer holds a few
// MiB at most, and a dying disk logs an error per IO.
const (
	maxRecords  = 1 << 17
	maxRecord   = 8 << 10
	maxLines    = 8
	maxLineText = 240
)

// Now is the kernel log's clock (CLOCK_MONOTONIC) in microseconds: its
// records are stamped with it.
func Now() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Sec)*1e6 + uint64(ts.Nsec)/1e3
}

// Log is what the kernel's log says of errors on devices since a moment.
type Log struct {
	// Lines are the first matching records (at most 8), their text only;
	// Count is how many matched in all.
	Lines []string
	Count int
}

// Errors reads the kernel's log (dev/kmsg) for records at or after since
// (Now's clock) that name one of devices and an error. An unreadable log
// (no permission, none in a container) gives an empty Log and the error.
func (fs FS) Errors(devices []string, since uint64) (Log, error) {
	// A raw non-blocking descriptor: through os.File the runtime's poller
	// would wait for the next record instead of saying there is none.
	fd, err := unix.Open(filepath.Join(fs.dev(), "kmsg"), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return Log{}, &os.PathError{Op: "open", Path: filepath.Join(fs.dev(), "kmsg"), Err: err}
	}
	defer unix.Close(fd)
	return scan(kmsg(fd), devices, since)
}

// kmsg reads one record per read, and says io.EOF once none is left.
type kmsg int

func (k kmsg) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(int(k), b)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, io.EOF
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// scan reads kmsg records from r until it has no more (EAGAIN on the real
// file, EOF on a test's).
func scan(r io.Reader, devices []string, since uint64) (Log, error) {
	words := devicePattern(devices)
	var out Log
	if words == nil {
		return out, nil
	}
	buf := make([]byte, maxRecord)
	br, isFile := r.(kmsg)
	var lines *bufio.Scanner
	if !isFile {
		lines = bufio.NewScanner(r)
		lines.Buffer(buf, maxRecord)
	}
	for i := 0; i < maxRecords; i++ {
		var rec string
		if isFile {
			// /dev/kmsg gives one record per read.
			n, err := br.Read(buf)
			if errors.Is(err, unix.EPIPE) {
				continue // records overwritten while reading: go on
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return out, err
			}
			rec = string(buf[:n])
		} else {
			if !lines.Scan() {
				break
			}
			rec = lines.Text()
		}
		at, text, ok := parseRecord(rec)
		if !ok || at < since || !words.MatchString(text) || !strings.Contains(strings.ToLower(text), "error") {
			continue
		}
		out.Count++
		if len(out.Lines) < maxLines {
			if len(text) > maxLineText {
				text = text[:maxLineText] + "..."
			}
			out.Lines = append(out.Lines, text)
		}
	}
	return out, nil
}

var devName = regexp.MustCompile(`^[a-zA-Z0-9_.:-]{1,32}$`)

// devicePattern matches a device's name as a word in a message ("dev
// loop7,", "[sda]", "nvme0n1:"); nil when no name is usable.
func devicePattern(devices []string) *regexp.Regexp {
	var alt []string
	for _, d := range devices {
		if devName.MatchString(d) {
			alt = append(alt, regexp.QuoteMeta(d))
		}
	}
	if len(alt) == 0 {
		return nil
	}
	return regexp.MustCompile(`(^|[^a-zA-Z0-9])(` + strings.Join(alt, "|") + `)([^a-zA-Z0-9]|$)`)
}

// parseRecord reads one kmsg record: "PRIO,SEQ,TIME_US,FLAGS[,...];TEXT"
// and continuation lines (" KEY=VALUE") after it, which are dropped.
func parseRecord(rec string) (at uint64, text string, ok bool) {
	head, text, found := strings.Cut(rec, ";")
	if !found {
		return 0, "", false
	}
	text, _, _ = strings.Cut(text, "\n")
	f := strings.Split(head, ",")
	if len(f) < 4 {
		return 0, "", false
	}
	at, err := strconv.ParseUint(f[2], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return at, strings.TrimSpace(text), true
}

// IOErrCount is a SCSI device's count of commands that failed
// (sys/class/block/NAME/device/ioerr_cnt; for a partition its disk's),
// since the device appeared. ok is false where the device has none.
func (fs FS) IOErrCount(name string) (n uint64, ok bool) {
	if !devName.MatchString(name) || strings.Contains(name, "..") {
		return 0, false
	}
	base := filepath.Join(fs.sys(), "class", "block", name)
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	// A partition's directory sits inside its disk's.
	for _, p := range []string{filepath.Join(base, "device", "ioerr_cnt"), filepath.Join(filepath.Dir(base), "device", "ioerr_cnt")} {
		b, err := readSmall(p)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
		if err != nil {
			continue
		}
		return v, true
	}
	return 0, false
}

func readSmall(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64))
}
