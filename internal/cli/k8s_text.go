package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// progressLog writes a run's progress, one line per target event (the
// event's own line), each stamped with the time since Start. Quiet
// writes nothing.
type progressLog struct {
	mu    sync.Mutex
	W     io.Writer
	Quiet bool
	Start time.Time
}

// Line writes one progress line.
func (p *progressLog) Line(format string, args ...any) {
	if p.Quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.W, "%s  %s\n", units.Clock(time.Since(p.Start)), fmt.Sprintf(format, args...))
}

// Done ends the progress: lines stay as written.
func (p *progressLog) Done() {}
