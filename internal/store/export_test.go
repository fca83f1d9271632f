package store

import "github.com/iolens/iolens/internal/result"

// encodeRecord is encode with a writer of its own, for one record.
func encodeRecord(r *result.Result) ([]byte, error) {
	var e recordEncoder
	return e.encode(r)
}
