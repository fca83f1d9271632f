package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/termtext"
)

// DiscoverMounted sets how devices are found over time without the
// cluster. Named devices stay as they are; without names every disk
// behind a mounted file system is watched, and looked for again every
// minute, as volumes are mounted on a node when pods come.
func (c *Config) DiscoverMounted() {
	c.Rediscover = time.Minute
	if len(c.Devices) > 0 {
		return
	}
	procRoot, sysRoot := c.ProcRoot, c.SysRoot
	c.Discover = func() (Discovery, error) {
		names, mounts, err := DefaultDevices(procRoot, sysRoot)
		return Discovery{Devices: names, Mounts: mounts}, err
	}
}

// DiscoverWith sets discover (the node's volumes, from the cluster) as
// how devices are found over time, and what each is expected to be; it
// asks it once now for the devices to start with.
func (c *Config) DiscoverWith(discover func() (Discovery, error)) {
	c.Rediscover = time.Minute
	d, err := discover()
	if err != nil {
		c.Notes = append(c.Notes, "expected disks from the cluster, so far in part: "+err.Error())
	}
	if len(d.Devices) > 0 {
		c.Devices, c.Mounts = d.Devices, d.Mounts
	}
	c.Ceilings = d.Ceilings
	for _, dev := range slices.Sorted(maps.Keys(d.Ceilings)) {
		c.Notes = append(c.Notes, fmt.Sprintf("%s is expected to be %s (%s)", dev, d.Ceilings[dev].Name, d.About[dev]))
	}
	c.Discover = discover
}

// AttributeCgroups attributes IO to the cgroups under root (default
// SysRoot/fs/cgroup), pods named by pods. Where the cgroups cannot be
// read, a note says so and IO is not attributed.
func (c *Config) AttributeCgroups(root string, pods PodNamer) {
	if root == "" {
		root = strings.TrimRight(c.SysRoot, "/") + "/fs/cgroup"
	}
	cg, err := FindCgroups(root, c.ProcRoot)
	if err != nil {
		c.Notes = append(c.Notes, "no per-cgroup attribution: "+err.Error())
		return
	}
	cg.Pods = pods
	c.Cgroups = cg
}

// Feed expects each of w's devices to be its ceiling in cfg, and returns
// the record sink that updates m: a device added, or expected to be
// another disk, gets its new ceiling.
func (m *Metrics) Feed(w *Watcher, cfg *Config) func(result.WatchRecord) error {
	for _, d := range w.Devices() {
		m.Expect(d.Name, cfg.CeilingOf(d.Name))
	}
	var mu sync.Mutex
	return func(r result.WatchRecord) error {
		mu.Lock()
		defer mu.Unlock()
		if f := r.Finding; r.Type == result.WatchTypeFinding && f != nil && (f.Kind == result.KindDevice || f.Kind == result.KindExpect) {
			m.Expect(f.Device, w.CeilingOf(f.Device))
		}
		m.Observe(r)
		return nil
	}
}

// TextLog writes a line that says what is watched, then returns the
// record sink that writes one line per finding (-o text).
func TextLog(out io.Writer, w *Watcher, interval time.Duration) func(result.WatchRecord) error {
	names := []string{}
	for _, d := range w.Devices() {
		names = append(names, d.Name)
	}
	fmt.Fprintf(out, "iolens watch: watching %s every %s; findings follow\n", strings.Join(names, ", "), interval)
	return func(r result.WatchRecord) error {
		if line := FindingLine(r); line != "" {
			_, err := fmt.Fprintln(out, line)
			return err
		}
		return nil
	}
}

// Screen draws a View on a terminal, redrawn in place on the alternate
// screen. Size gives the terminal's width and height.
type Screen struct {
	W    io.Writer
	Size func() (width, height int, err error)
	v    *View
}

// NewScreen is the screen of w's live view.
func NewScreen(out io.Writer, size func() (int, int, error), w *Watcher) *Screen {
	return &Screen{W: out, Size: size, v: NewView(w)}
}

// Open enters the alternate screen and hides the cursor.
func (s *Screen) Open() { fmt.Fprint(s.W, "\x1b[?1049h\x1b[?25l") }

// Close leaves the alternate screen and prints the findings log, so that
// it outlives the view.
func (s *Screen) Close() {
	fmt.Fprint(s.W, "\x1b[?25h\x1b[?1049l")
	log := s.v.Log()
	if len(log) == 0 {
		fmt.Fprintln(s.W, "iolens watch: no findings")
		return
	}
	fmt.Fprintln(s.W, "iolens watch findings:")
	for _, l := range log {
		fmt.Fprintln(s.W, termtext.Clean(l))
	}
}

// Add takes a record, redrawing the view when it completes a sample.
func (s *Screen) Add(r result.WatchRecord) error {
	if !s.v.Add(r) {
		return nil // drawn with the next sample
	}
	wd, ht, err := s.Size()
	if err != nil {
		wd, ht = 120, 40
	}
	var b strings.Builder
	b.WriteString("\x1b[H")
	for _, l := range s.v.Render(wd, ht) {
		// Device, pod and cgroup names come from the host and the
		// cluster: only the view's own codes may reach the terminal.
		b.WriteString(termtext.Clean(l))
		b.WriteString("\x1b[K\n")
	}
	b.WriteString("\x1b[J")
	_, err = io.WriteString(s.W, b.String())
	return err
}

// NDJSON is the record sink that writes each record as a line of JSON.
func NDJSON(w io.Writer) func(result.WatchRecord) error {
	enc := json.NewEncoder(w)
	return func(r result.WatchRecord) error { return enc.Encode(r) }
}

// Fanout is the record sink that hands each record to every sink in
// turn, stopping at the first error.
func Fanout(sinks ...func(result.WatchRecord) error) func(result.WatchRecord) error {
	return func(r result.WatchRecord) error {
		for _, s := range sinks {
			if err := s(r); err != nil {
				return err
			}
		}
		return nil
	}
}
