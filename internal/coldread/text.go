package coldread

import (
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/units"
)

// WriteText writes the sample as text: the verdict, then each depth's
// first and second touch.
func (r *Report) WriteText(w io.Writer) error {
	for _, l := range r.Verdict {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "\nsampled %d blocks of %s in %s files (%s of data, %s read)\n", r.QD1.First.N+r.Deep.First.N, units.HumanBytes(float64(r.BlockBytes)),
		units.Commas(int64(r.Files)), units.HumanBytes(float64(r.DataBytes)), units.HumanBytes(float64(r.ReadBytes)))
	for _, p := range []Phase{r.QD1, r.Deep} {
		fmt.Fprintf(w, "QD%-3d first touch: %s IOPS, median %s, p99 %s; second touch: %s IOPS, median %s, p99 %s\n", p.QD,
			units.Figure(p.First.IOPS), units.Latency(p.First.MedianNs), units.Latency(p.First.P99Ns),
			units.Figure(p.Second.IOPS), units.Latency(p.Second.MedianNs), units.Latency(p.Second.P99Ns))
	}
	if r.Skipped > 0 {
		fmt.Fprintf(w, "%d files could not be opened for direct reads and were left out\n", r.Skipped)
	}
	return nil
}
