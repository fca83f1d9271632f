package realio

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Exclusive holders never overlap, also within one process (each holder
// opens its own file description, and flock locks are per description).
func TestExclusive(t *testing.T) {
	// Not the machine lock: the real-IO tests of other packages hold it.
	dir := t.TempDir()
	if most := holders(t, 3, func(t *testing.T, _ int) { exclusiveOn(t, dir) }); most != 1 {
		t.Errorf("%d holders at once", most)
	}
}

// holders runs n holders of take at once, each for 30 ms, and returns
// how many held at the same time at most.
func holders(t *testing.T, n int, take func(t *testing.T, i int)) int {
	var mu sync.Mutex
	active, most := 0, 0
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run("holder", func(t *testing.T) {
				take(t, i)
				mu.Lock()
				active++
				most = max(most, active)
				mu.Unlock()
				time.Sleep(30 * time.Millisecond)
				mu.Lock()
				active--
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	return most
}

// Shared holders fill the slots and no more: with 2 slots, 5 holders are
// never more than 2 at once, and they do overlap.
func TestSharedSlots(t *testing.T) {
	dir := t.TempDir()
	name := "iolens-realio-test-" + strconv.Itoa(os.Getpid())
	if most := holders(t, 5, func(t *testing.T, _ int) { sharedOn(t, dir, name, 2) }); most != 2 {
		t.Errorf("%d shared holders at once with 2 slots, want 2", most)
	}
	if most := holders(t, 3, func(t *testing.T, _ int) { sharedOn(t, dir, name+"-one", 1) }); most != 1 {
		t.Errorf("%d shared holders at once with 1 slot", most)
	}
}

// An exclusive holder never runs beside a shared one, while shared
// holders do run beside each other.
func TestExclusiveExcludesShared(t *testing.T) {
	dir := t.TempDir()
	name := "iolens-realio-test-x-" + strconv.Itoa(os.Getpid())
	var mu sync.Mutex
	exclusive, shared, mostShared, beside := 0, 0, 0, 0
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run("holder", func(t *testing.T) {
				excl := i%3 == 0
				if excl {
					exclusiveOn(t, dir)
				} else {
					sharedOn(t, dir, name, 4)
				}
				mu.Lock()
				if excl {
					exclusive++
				} else {
					shared++
					mostShared = max(mostShared, shared)
				}
				if exclusive > 0 && exclusive+shared > 1 {
					beside++
				}
				mu.Unlock()
				time.Sleep(30 * time.Millisecond)
				mu.Lock()
				if excl {
					exclusive--
				} else {
					shared--
				}
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	if beside > 0 {
		t.Errorf("an exclusive holder ran beside another holder %d times", beside)
	}
	if mostShared < 2 {
		t.Errorf("shared holders never overlapped (at most %d at once)", mostShared)
	}
}

func TestSlots(t *testing.T) {
	for v, want := range map[string]int{"": DefaultSlots, "1": 1, "3": 3} {
		if n, err := Slots(v); err != nil || n != want {
			t.Errorf("Slots(%q) = %d, %v; want %d", v, n, err, want)
		}
	}
	for _, v := range []string{"0", "-1", "x", "17", "2.5"} {
		if _, err := Slots(v); err == nil || !strings.Contains(err.Error(), SlotsEnv) {
			t.Errorf("Slots(%q): %v, want an error naming %s", v, err, SlotsEnv)
		}
	}
}

func TestRunsIn(t *testing.T) {
	for _, c := range []struct {
		v, pass string
		want    bool
	}{
		{"", PassExclusive, true}, {"", PassShared, true},
		{PassExclusive, PassExclusive, true}, {PassExclusive, PassShared, false},
		{PassShared, PassShared, true}, {PassShared, PassExclusive, false},
	} {
		if got, err := RunsIn(c.v, c.pass); err != nil || got != c.want {
			t.Errorf("RunsIn(%q, %q) = %v, %v; want %v", c.v, c.pass, got, err, c.want)
		}
	}
	for _, v := range []string{"x", "Exclusive", "both", " shared"} {
		if _, err := RunsIn(v, PassShared); err == nil || !strings.Contains(err.Error(), PassEnv) {
			t.Errorf("RunsIn(%q): %v, want an error naming %s", v, err, PassEnv)
		}
	}
}
