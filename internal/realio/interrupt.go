package realio

import (
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pending holds the cleanups that must run even when the test binary is
// interrupted. A test binary's signal disposition is the process's, so
// this is the one piece of state the package keeps: a registry of what
// the running tests set up on the machine, and the handler that undoes
// it on SIGINT or SIGTERM.
var pending struct {
	sync.Mutex
	next    int
	fns     map[int]func()
	watched bool
	// closing: a signal came and the pending cleanups are running; what
	// registers now is undone at once (late counts those still running).
	closing bool
	late    int
}

// Cleanup registers fn as t.Cleanup does, and also to run if the test
// binary is interrupted (SIGINT, as Ctrl-C sends, or SIGTERM) before t
// ends: go test's default is to die at once, which leaves loop devices,
// mounts, cgroups and daemons behind. On such a signal every registered
// fn runs, newest first, and the binary exits with 128 plus the signal's
// number; what registers after the signal is undone at once. fn runs once
// either way; it may call t.Errorf, not t.Fatal (on a signal its report
// is lost with the test's output: the handler says how many ran).
func Cleanup(t testing.TB, fn func()) {
	t.Helper()
	var once sync.Once
	run := func() { once.Do(fn) }
	id, late := register(run)
	if late {
		run()
		pending.Lock()
		pending.late--
		pending.Unlock()
	}
	t.Cleanup(func() {
		// Unregistered only once done: a signal meanwhile waits for it
		// (once) rather than exit halfway through.
		run()
		unregister(id)
	})
}

// register adds fn to the pending cleanups and returns its id; late says
// a signal already came, and the caller must run fn now and then count
// it out of pending.late.
func register(fn func()) (id int, late bool) {
	pending.Lock()
	defer pending.Unlock()
	if !pending.watched {
		pending.watched = true
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go onSignal(ch)
	}
	if pending.closing {
		pending.late++
		return 0, true
	}
	if pending.fns == nil {
		pending.fns = map[int]func(){}
	}
	pending.next++
	pending.fns[pending.next] = fn
	return pending.next, false
}

func unregister(id int) {
	pending.Lock()
	defer pending.Unlock()
	delete(pending.fns, id)
}

// onSignal waits for the first signal, runs the pending cleanups and
// exits.
func onSignal(ch chan os.Signal) {
	s := <-ch
	// A second Ctrl-C does what go test's default does: ends the binary
	// at once.
	signal.Stop(ch)
	// go test may exit before this binary does (it does with several
	// packages): a write to its closed pipe must not end this one before
	// the cleanups have run.
	signal.Ignore(syscall.SIGPIPE)
	fmt.Fprintf(os.Stderr, "realio: %v: undoing what the running tests set up (again to stop at once)\n", s)
	pending.Lock()
	pending.closing = true
	pending.Unlock()
	n := runPending()
	for {
		pending.Lock()
		late := pending.late
		pending.Unlock()
		if late == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "realio: %v: ran the cleanups of %d real-IO test resources, exiting\n", s, n)
	code := 1
	if sig, ok := s.(syscall.Signal); ok {
		code = 128 + int(sig)
	}
	os.Exit(code)
}

// runPending runs every pending cleanup, newest first, each in its own
// goroutine (a cleanup that calls t.FailNow ends that goroutine, not this
// one), one after another, and returns how many ran.
func runPending() int {
	pending.Lock()
	fns := pending.fns
	pending.fns = nil
	pending.Unlock()
	ids := slices.Sorted(maps.Keys(fns))
	slices.Reverse(ids)
	for _, id := range ids {
		done := make(chan struct{})
		go func() {
			defer close(done)
			fns[id]()
		}()
		<-done
	}
	return len(ids)
}
