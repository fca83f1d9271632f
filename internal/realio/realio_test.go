package realio

import (
	"sync"
	"testing"
	"time"
)

// Two holders never overlap, also within one process (each holder opens
// its own file description, and flock locks are per description).
func TestExclusive(t *testing.T) {
	// Not the machine lock: the real-IO tests of other packages hold it.
	dir := t.TempDir()
	var mu sync.Mutex
	active, most := 0, 0
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run("holder", func(t *testing.T) {
				exclusiveOn(t, dir)
				mu.Lock()
				active++
				most = max(most, active)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				mu.Lock()
				active--
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d holders at once", most)
	}
}
