package store

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/result"
)

// maxRecordBytes bounds what one stored record may inflate to, so a
// hostile or damaged database cannot make a reader allocate without
// limit (a gzip bomb). Real records with an hour of 1 s samples on four
// devices stay under 20 MB.
const maxRecordBytes = 256 << 20

// encodeRecord is the one place a record is turned into what the results
// table keeps: the gzip of its NDJSON line.
func encodeRecord(r *result.Result) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeRecord is the one place a stored record is read back.
func decodeRecord(gz []byte) (result.Result, error) {
	var r result.Result
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return r, err
	}
	b, err := io.ReadAll(io.LimitReader(zr, maxRecordBytes+1))
	if err != nil {
		return r, err
	}
	if len(b) > maxRecordBytes {
		return r, fmt.Errorf("stored record is larger than %d MiB", maxRecordBytes>>20)
	}
	err = json.Unmarshal(b, &r)
	return r, err
}
