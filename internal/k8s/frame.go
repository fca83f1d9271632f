package k8s

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// The agent writes each record as one line:
//
//	IOLENS1 <len> <crc32hex> <json>\n
//
// len is the byte length of <json> and crc32hex its IEEE CRC-32 in 8 hex
// digits. Container logs mix stdout and stderr, may split long lines, and a
// log stream can be cut in the middle of a line; the length and checksum let
// the reader keep whole records and skip everything else.
const framePrefix = "IOLENS1 "

// maxFrame bounds one record. A result with fio's json+ output and 1 s
// series for a long test is a few MiB at most.
const maxFrame = 64 << 20

// Record is one message from the agent. Seq numbers records from 1 so that
// a reader that reconnects to a log can skip what it has already seen.
type Record struct {
	Seq  int    `json:"seq"`
	Type string `json:"type"` // "event", "result" or "done"
	// Event fields.
	Test    int    `json:"test,omitempty"`
	Tests   int    `json:"tests,omitempty"`
	Name    string `json:"name,omitempty"`
	Message string `json:"message,omitempty"`
	// Ready: the agent waits for the start time of its gate.
	Ready bool `json:"ready,omitempty"`
	// At is when the agent wrote the event, by its clock.
	At time.Time `json:"at,omitzero"`
	// Result is a result.Result, kept raw so that the reader does not
	// depend on knowing every field.
	Result json.RawMessage `json:"result,omitempty"`
	// Done fields: the agent's final status.
	Error string `json:"error,omitempty"`
	Hint  string `json:"hint,omitempty"`
}

// Record types.
const (
	RecordEvent  = "event"
	RecordResult = "result"
	RecordDone   = "done"
)

// FrameWriter writes records as framed lines, each with one Write call so
// that a line is never interleaved with other output.
type FrameWriter struct {
	mu  sync.Mutex
	w   io.Writer
	seq int
}

// NewFrameWriter writes frames to w.
func NewFrameWriter(w io.Writer) *FrameWriter { return &FrameWriter{w: w} }

// Write numbers r and writes it as one line.
func (f *FrameWriter) Write(r Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	r.Seq = f.seq
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding record: %w", err)
	}
	_, err = f.w.Write(AppendFrame(nil, body))
	return err
}

// AppendFrame appends the framed line for body to dst.
func AppendFrame(dst, body []byte) []byte {
	dst = append(dst, framePrefix...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, ' ')
	dst = fmt.Appendf(dst, "%08x", crc32.ChecksumIEEE(body))
	dst = append(dst, ' ')
	dst = append(dst, body...)
	return append(dst, '\n')
}

// ErrBadFrame marks a line that starts like a frame but is damaged.
var ErrBadFrame = errors.New("damaged frame")

// ParseFrame decodes one line (without its newline). ok is false for a line
// that is not a frame at all; err is set for a frame that is damaged
// (truncated, wrong length or checksum, bad JSON).
func ParseFrame(line []byte) (rec Record, ok bool, err error) {
	i := bytes.Index(line, []byte(framePrefix))
	if i < 0 {
		return Record{}, false, nil
	}
	// Text before the prefix comes from another writer that had not ended
	// its line; the frame itself is still whole.
	rest := line[i+len(framePrefix):]
	sp := bytes.IndexByte(rest, ' ')
	if sp < 0 {
		return Record{}, true, fmt.Errorf("%w: no length", ErrBadFrame)
	}
	n, perr := strconv.Atoi(string(rest[:sp]))
	if perr != nil || n < 0 || n > maxFrame {
		return Record{}, true, fmt.Errorf("%w: bad length %q", ErrBadFrame, rest[:sp])
	}
	rest = rest[sp+1:]
	if len(rest) < 9 || rest[8] != ' ' {
		return Record{}, true, fmt.Errorf("%w: no checksum", ErrBadFrame)
	}
	sum, perr := strconv.ParseUint(string(rest[:8]), 16, 32)
	if perr != nil {
		return Record{}, true, fmt.Errorf("%w: bad checksum %q", ErrBadFrame, rest[:8])
	}
	body := rest[9:]
	if len(body) < n {
		return Record{}, true, fmt.Errorf("%w: truncated (%d of %d bytes)", ErrBadFrame, len(body), n)
	}
	// Anything after the body belongs to another writer; the length says
	// where this record ends.
	body = body[:n]
	if crc32.ChecksumIEEE(body) != uint32(sum) {
		return Record{}, true, fmt.Errorf("%w: checksum mismatch", ErrBadFrame)
	}
	if err := json.Unmarshal(body, &rec); err != nil {
		return Record{}, true, fmt.Errorf("%w: %v", ErrBadFrame, err)
	}
	return rec, true, nil
}

// FrameReader reads records from a log stream. Lines that are not frames
// are kept (the last few) for diagnosis; damaged frames are counted.
type FrameReader struct {
	r *bufio.Reader
	// Damaged counts frames that failed their length or checksum.
	Damaged int
	// Other holds the last lines that were not frames (stderr of the
	// agent or of fio), newest last.
	Other []string
	// Partial is set when the stream ended in the middle of a line.
	Partial bool
}

// NewFrameReader reads frames from r.
func NewFrameReader(r io.Reader) *FrameReader {
	return &FrameReader{r: bufio.NewReaderSize(r, 64<<10)}
}

const keepOther = 20

// Next returns the next whole record. It returns io.EOF at the end of the
// stream, or the stream's own error; a final line without a newline is
// treated as cut short and reported through Partial, never as a record.
func (f *FrameReader) Next() (Record, error) {
	for {
		line, err := f.readLine()
		if err != nil {
			if len(line) > 0 {
				f.Partial = true
			}
			return Record{}, err
		}
		rec, ok, perr := ParseFrame(line)
		switch {
		case !ok:
			f.other(string(line))
		case perr != nil:
			f.Damaged++
		default:
			return rec, nil
		}
	}
}

// readLine returns a line without its newline; a line longer than
// maxFrame is dropped whole and counted as damaged.
func (f *FrameReader) readLine() ([]byte, error) {
	var buf []byte
	dropping := false
	for {
		chunk, err := f.r.ReadSlice('\n')
		if !dropping {
			if len(buf)+len(chunk) > maxFrame+1024 {
				dropping, buf = true, nil
				f.Damaged++
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			return bytes.TrimRight(buf, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, err
		}
	}
}

func (f *FrameReader) other(s string) {
	if s == "" {
		return
	}
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	f.Other = append(f.Other, s)
	if len(f.Other) > keepOther {
		f.Other = f.Other[len(f.Other)-keepOther:]
	}
}

// Results returns an encoder that writes each result as a result record.
func (f *FrameWriter) Results() ResultEncoder { return ResultEncoder{f} }

// ResultEncoder frames results (it is a pipeline.Encoder).
type ResultEncoder struct{ f *FrameWriter }

// Encode writes r as one result record, through the record codec.
func (e ResultEncoder) Encode(r *result.Result) error {
	b, err := result.Marshal(r)
	if err != nil {
		return err
	}
	return e.f.Write(Record{Type: RecordResult, Result: b})
}
