package store

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/result"
)

// encodeRecord is the one place a record is turned into what the results
// table keeps: the gzip of its JSON, as the record codec writes it.
func encodeRecord(r *result.Result) ([]byte, error) {
	b, err := result.Marshal(r)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeRecord is the one place a stored record is read back, through the
// record codec (records of older schemas are upgraded). What a record may
// inflate to is bounded, so a damaged or hostile database cannot make a
// reader allocate without limit.
func decodeRecord(gz []byte) (result.Result, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return result.Result{}, err
	}
	b, err := io.ReadAll(io.LimitReader(zr, result.MaxRecordBytes+1))
	if err != nil {
		return result.Result{}, err
	}
	if len(b) > result.MaxRecordBytes {
		return result.Result{}, fmt.Errorf("stored record is larger than %d MiB", result.MaxRecordBytes>>20)
	}
	return result.Unmarshal(b)
}
