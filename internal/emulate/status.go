package emulate

import (
	"encoding/json"
	"errors"
)

// decodeStatus reads the controller's status.json, which anyone who can
// write the disk's directory could have written: each of the model's
// groups (IOPS credits, bandwidth credits, the write cache) must come
// whole or not at all, and no figure may be negative, so that status
// never shows half a bucket or dereferences what is missing.
func decodeStatus(b []byte) (*State, error) {
	var m State
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	whole := func(b *bool, fs ...*float64) bool {
		set := b != nil
		for _, f := range fs {
			if (f != nil) != set || f != nil && *f < 0 {
				return false
			}
		}
		return true
	}
	l := m.Limits
	if !whole(m.IOPSBursting, m.IOPSCredits, m.IOPSBucket) || !whole(m.BWBursting, m.BWCredits, m.BWBucket) ||
		!whole(m.Stalled, m.DirtyBytes, m.CacheBytes) || l.ReadIOPS < 0 || l.WriteIOPS < 0 || l.ReadBPS < 0 || l.WriteBPS < 0 || m.ElapsedS < 0 {
		return nil, errors.New("status: an incomplete or negative figure")
	}
	return &m, nil
}
