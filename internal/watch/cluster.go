package watch

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"sync"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/termtext"
)

// ClusterState is what the watch pods of a cluster reported: the latest
// sample per node, the findings seen, and the nodes whose stream failed.
// It is safe for concurrent use.
type ClusterState struct {
	mu       sync.Mutex
	samples  map[string]result.WatchRecord // node -> last sample
	findings []string
	errs     map[string]string
}

// NewClusterState is an empty state.
func NewClusterState() *ClusterState {
	return &ClusterState{samples: map[string]result.WatchRecord{}, errs: map[string]string{}}
}

// Add takes one record of node's stream.
func (c *ClusterState) Add(node string, r result.WatchRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.Type {
	case result.WatchTypeSample:
		c.samples[node] = r
	case result.WatchTypeFinding:
		c.findings = append(c.findings, node+"  "+FindingLine(r))
		if len(c.findings) > 200 {
			c.findings = c.findings[len(c.findings)-200:]
		}
	}
}

// Fail records that node's stream could not be read.
func (c *ClusterState) Fail(node, err string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs[node] = err
}

// Reported is how many nodes have sent a sample.
func (c *ClusterState) Reported() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.samples)
}

// ReadStream decodes NDJSON watch records, skipping other lines and
// records with a figure no device gives (result.DecodeWatch checks them,
// and keeps their text to one line).
func ReadStream(r io.Reader, fn func(result.WatchRecord)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		rec, err := result.DecodeWatch(line)
		if err != nil || !result.IsWatch(rec.Schema) {
			continue
		}
		fn(rec)
	}
}

// ClearScreen moves a terminal's cursor home and clears the screen.
const ClearScreen = "\x1b[H\x1b[2J"

// WriteCluster writes one row per node and device, then the findings;
// with redraw, it clears the terminal first.
func WriteCluster(w io.Writer, st *ClusterState, redraw bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if redraw {
		fmt.Fprint(w, ClearScreen)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tDEVICE\tSTATE\tr/s\tw/s\tMB/s\tawait ms\taqu-sz\t%util\tTOP POD")
	for _, node := range sortedKeys(st.samples) {
		r := st.samples[node]
		for _, d := range r.Devices {
			top := d.TopCgroup
			for _, c := range r.Top {
				if c.Device == d.Device {
					top = c.Name()
					break
				}
			}
			if top == "" {
				top = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.0f\t%s\n", node, d.Device, d.State, d.ReadIOPS, d.WriteIOPS,
				(d.ReadBWBytes+d.WriteBWBytes)/1e6, max(d.ReadAwaitMs, d.WriteAwaitMs), d.QueueSize, d.UtilPct, top)
		}
	}
	for _, node := range sortedKeys(st.errs) {
		fmt.Fprintf(tw, "%s\t-\tno data\t\t\t\t\t\t\t%s\n", termtext.Line(node), termtext.Line(st.errs[node]))
	}
	tw.Flush()
	if len(st.findings) > 0 {
		fmt.Fprintln(w, "\nFINDINGS")
		for _, f := range st.findings[max(0, len(st.findings)-20):] {
			fmt.Fprintln(w, f)
		}
	}
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
