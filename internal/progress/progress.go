// Package progress draws a run's progress as it goes: a live line on a
// terminal with a line per finished test (Run), or one stamped line per
// event (Log). It writes to the writer it is given and nowhere else.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/termtext"
	"github.com/iolens/iolens/internal/units"
)

// Run draws a run's events on W: on a terminal (TTY) one live line,
// rewritten in place, and a line per finished test; elsewhere plain lines.
// What it prints (test names, fio's messages, paths) passes the terminal
// filter; only its own codes that redraw the live line do not.
// Quiet draws nothing. Summary says what a finished test's line shows.
type Run struct {
	mu      sync.Mutex
	W       io.Writer
	TTY     bool
	Width   int // of the terminal; 100 when 0
	Quiet   bool
	Summary func(*result.Result) string
	live    bool
	// header is the run's first line, held until something else prints:
	// a run refused before it starts (a mistyped DIR) says only why.
	header string
}

// Header sets the run's first line, printed before the next line or
// event, never when nothing follows it.
func (p *Run) Header(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.header = fmt.Sprintf(format, args...)
}

// flushHeader prints the held header; p.mu is held.
func (p *Run) flushHeader() {
	if p.header != "" {
		fmt.Fprintln(p.W, termtext.Clean(p.header))
		p.header = ""
	}
}

func (p *Run) clearLive() {
	if p.live {
		fmt.Fprint(p.W, "\r\033[K")
		p.live = false
	}
}

// Line prints a message that stays, above any live line.
func (p *Run) Line(format string, args ...any) {
	if p.Quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLive()
	p.flushHeader()
	fmt.Fprintln(p.W, termtext.Clean(fmt.Sprintf(format, args...)))
}

// Event draws one event (the callback Run and Open take).
func (p *Run) Event(e runner.Event) {
	if p.Quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.header != "" {
		p.clearLive()
		p.flushHeader()
	}
	switch e.Kind {
	case runner.EventInfo, runner.EventPrepare, runner.EventCleanup:
		p.clearLive()
		fmt.Fprintln(p.W, termtext.Clean(e.Message))
	case runner.EventTestStart:
		if !p.TTY {
			eta := ""
			if e.Total > 0 {
				eta = ", about " + units.Clock(e.ETA) + " left"
			}
			fmt.Fprintln(p.W, termtext.Clean(fmt.Sprintf("%s %s (%s) started, elapsed %s%s", place(e), e.Test.Name, e.Test.Summary(), units.Clock(e.Elapsed), eta)))
			return
		}
		p.drawLive(e)
	case runner.EventStatus:
		if p.TTY {
			p.drawLive(e)
		}
	case runner.EventTestEnd:
		p.clearLive()
		summary := "done"
		if p.Summary != nil {
			summary = p.Summary(e.Result)
		}
		fmt.Fprintln(p.W, termtext.Clean(fmt.Sprintf("%s %s: %s", place(e), e.Test.Name, summary)))
	}
}

// place is "[3/6]" in a suite, "[3]" in a plan that does not know its
// total.
func place(e runner.Event) string {
	if e.Index == 0 {
		return ""
	}
	if e.Total > 0 {
		return fmt.Sprintf("[%d/%d]", e.Index, e.Total)
	}
	return fmt.Sprintf("[%d]", e.Index)
}

func (p *Run) drawLive(e runner.Event) {
	s := strings.TrimSpace(fmt.Sprintf("%s %s  %s", place(e), e.Test.Name, units.Clock(e.Elapsed)))
	if e.Total > 0 {
		s += ", ETA " + units.Clock(e.ETA)
	}
	if e.Kind == runner.EventStatus {
		s += "  " + units.Whole(e.IOPS) + " IOPS  " + units.MB(e.BWBytes) + " MB/s"
	}
	width := p.Width
	if width <= 20 {
		width = 100
	}
	if len(s) > width-1 {
		s = s[:width-1]
	}
	fmt.Fprint(p.W, "\r\033[K"+termtext.Clean(s))
	p.live = true
}

// Done removes any live line.
func (p *Run) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLive()
}

// Log writes a run's progress, one line per target event (the
// event's own line), each stamped with the time since Start. Quiet
// writes nothing.
type Log struct {
	mu    sync.Mutex
	W     io.Writer
	Quiet bool
	Start time.Time
}

// Line writes one progress line.
func (p *Log) Line(format string, args ...any) {
	if p.Quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.W, "%s  %s\n", units.Clock(time.Since(p.Start)), fmt.Sprintf(format, args...))
}

// Done ends the progress: lines stay as written.
func (p *Log) Done() {}
