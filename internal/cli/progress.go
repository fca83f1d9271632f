package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/units"
	"golang.org/x/term"
)

// progressPrinter draws bench events: a live, rewritten line on a
// terminal, plain lines otherwise.
type progressPrinter struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	quiet bool
	width int
	live  bool
}

func newProgressPrinter(w io.Writer, quiet bool) *progressPrinter {
	p := &progressPrinter{w: w, quiet: quiet, width: 100}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
		if wd, _, err := term.GetSize(int(f.Fd())); err == nil && wd > 20 {
			p.width = wd
		}
	}
	return p
}

func clock(d time.Duration) string { return units.Clock(d) }

func (p *progressPrinter) clearLive() {
	if p.live {
		fmt.Fprint(p.w, "\r\033[K")
		p.live = false
	}
}

// Line prints a message that stays, above any live line.
func (p *progressPrinter) Line(format string, args ...any) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLive()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// Event handles one bench event.
func (p *progressPrinter) Event(e runner.Event) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case runner.EventInfo, runner.EventPrepare, runner.EventCleanup:
		p.clearLive()
		fmt.Fprintf(p.w, "%s\n", e.Message)
	case runner.EventTestStart:
		if !p.tty {
			eta := ""
			if e.Total > 0 {
				eta = ", about " + clock(e.ETA) + " left"
			}
			fmt.Fprintf(p.w, "%s %s (%s) started, elapsed %s%s\n", place(e), e.Test.Name, e.Test.Summary(), clock(e.Elapsed), eta)
			return
		}
		p.drawLive(e)
	case runner.EventStatus:
		if p.tty {
			p.drawLive(e)
		}
	case runner.EventTestEnd:
		p.clearLive()
		fmt.Fprintf(p.w, "%s %s: %s\n", place(e), e.Test.Name, report.ResultSummary(e.Result))
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

func (p *progressPrinter) drawLive(e runner.Event) {
	s := strings.TrimSpace(fmt.Sprintf("%s %s  %s", place(e), e.Test.Name, clock(e.Elapsed)))
	if e.Total > 0 {
		s += ", ETA " + clock(e.ETA)
	}
	if e.Kind == runner.EventStatus {
		s += fmt.Sprintf("  %.0f IOPS  %.1f MB/s", e.IOPS, e.BWBytes/1e6)
	}
	if len(s) > p.width-1 {
		s = s[:p.width-1]
	}
	fmt.Fprint(p.w, "\r\033[K"+s)
	p.live = true
}

// Done removes any live line.
func (p *progressPrinter) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLive()
}
