package iotest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Two holders never overlap, also within one process (each Exclusive
// opens its own file description, and flock locks are per description).
func TestExclusive(t *testing.T) {
	// Not the module's lock: the real-IO tests of other packages hold it.
	dir := t.TempDir()
	lockPath = func() string { return dir }
	defer func() { lockPath = lockDir }()
	var mu sync.Mutex
	active, most := 0, 0
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run("holder", func(t *testing.T) {
				Exclusive(t)
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

func TestLockDirIsModuleRoot(t *testing.T) {
	if _, err := os.Stat(filepath.Join(lockDir(), "go.mod")); err != nil {
		t.Errorf("lock directory %s has no go.mod", lockDir())
	}
}
