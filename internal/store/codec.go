package store

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/result"
)

// recordEncoder is the one place a record is turned into what the results
// table keeps: the gzip of its JSON, as the record codec writes it. It
// keeps one gzip writer, reset for each record: a new writer allocates
// its tables (about a megabyte) each time. A save, an import and a
// Keeper each own one; it is not for use by two at once.
type recordEncoder struct {
	zw *gzip.Writer
}

func (e *recordEncoder) encode(r *result.Result) ([]byte, error) {
	b, err := result.Marshal(r)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if e.zw == nil {
		e.zw, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	} else {
		e.zw.Reset(&buf)
	}
	if _, err := e.zw.Write(b); err != nil {
		return nil, err
	}
	if err := e.zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeRecord is the one place a stored record is read back, through the
// record codec (records of older schemas are upgraded). What a record may
// inflate to is bounded, and so is what all the records one read takes
// inflate to together (*left, result.MaxReadBytes at the start, less each
// record's size), so a damaged or hostile database cannot make a reader
// allocate without limit.
func decodeRecord(gz []byte, left *int64) (result.Result, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return result.Result{}, err
	}
	limit := min(int64(result.MaxRecordBytes), *left)
	b, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return result.Result{}, err
	}
	if int64(len(b)) > limit {
		if limit < result.MaxRecordBytes {
			return result.Result{}, &result.TooMuchError{Max: result.MaxReadBytes}
		}
		return result.Result{}, fmt.Errorf("stored record is larger than %d MiB", result.MaxRecordBytes>>20)
	}
	*left -= int64(len(b))
	return result.Unmarshal(b)
}
