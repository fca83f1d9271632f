package promhist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/watch"
	"github.com/prometheus/procfs/blockdevice"
)

// The node exporter's series iolens reads.
const (
	mReads        = "node_disk_reads_completed_total"
	mWrites       = "node_disk_writes_completed_total"
	mReadBytes    = "node_disk_read_bytes_total"
	mWrittenBytes = "node_disk_written_bytes_total"
	mIOTime       = "node_disk_io_time_seconds_total"
	mWeighted     = "node_disk_io_time_weighted_seconds_total"
	mReadTime     = "node_disk_read_time_seconds_total"
	mWriteTime    = "node_disk_write_time_seconds_total"
	mIONow        = "node_disk_io_now"
	mCPU          = "node_cpu_seconds_total"
	mDirty        = "node_memory_Dirty_bytes"
	mWriteback    = "node_memory_Writeback_bytes"
	mPressure     = "node_pressure_io_waiting_seconds_total"
)

// deviceCounters are the counters every interval needs, in the order of
// counterSet.
var deviceCounters = [...]string{mReads, mWrites, mReadBytes, mWrittenBytes, mIOTime, mWeighted, mReadTime, mWriteTime}

// Options say what to read and how to judge it.
type Options struct {
	// Selector picks the node exporter's series (an instance, a node
	// label...); Devices the devices, all the selector has when empty.
	Selector promql.Selector
	Devices  []string
	From, To time.Time
	// Step is the resolution; 0 takes the scrape interval.
	Step time.Duration
	// Ceiling is the disk every device is expected to be (--expect);
	// Ceilings, per device, take precedence.
	Ceiling  *watch.Ceiling
	Ceilings map[string]*watch.Ceiling
	// Th are watch's thresholds (the defaults when zero).
	Th watch.Thresholds
	// Catalog, when set, names the catalog disks a flat ceiling fits.
	Catalog FitFunc
	// Progress, when set, is told what is being done (a coarser step).
	Progress func(string)
	// Bounds; zero takes the defaults.
	MaxSeries  int // device series of one query (default 64)
	ChunkSteps int // instants per range query at the first step (default 1000)
	// MaxQueries is the query budget: the range queries one analysis
	// may make (default DefaultMaxQueries). A range that needs more at
	// its step is refused (a *QueryBudgetError).
	MaxQueries int
	MaxStored  int // samples kept per device for the reports (default 2000)
	// MaxRetries is how many times a refused query is asked again at
	// twice the step (default 6).
	MaxRetries int
}

// FitFunc names the catalog disks whose limits are near measured
// ceilings (limits.Catalog.Fits).
type FitFunc func(iops, bwBytes float64) []Fit

func (o Options) withDefaults() Options {
	if o.Th == (watch.Thresholds{}) {
		o.Th = watch.DefaultThresholds()
	}
	if o.MaxSeries <= 0 {
		o.MaxSeries = 64
	}
	if o.ChunkSteps <= 0 {
		o.ChunkSteps = 1000
	}
	if o.MaxQueries <= 0 {
		o.MaxQueries = DefaultMaxQueries
	}
	if o.MaxStored <= 0 {
		o.MaxStored = 2000
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = 6
	}
	return o
}

// DefaultMaxQueries is the query budget of one analysis: 3,000 range
// queries, 187 chunks of ChunkSteps instants (each chunk asks
// queriesPerChunk queries). At a 15 s scrape interval that is about 32
// days, more than Prometheus keeps by default (15 days).
const DefaultMaxQueries = 3000

// queriesPerChunk is how many range queries chunk makes.
const queriesPerChunk = 1 + len(deviceCounters) + 7

// MaxLabelBytes bounds a label value iolens puts into a query (an
// instance or a device from Prometheus's answers, or a --device): a
// disk's name is a few bytes, an instance a host and port.
const MaxLabelBytes = 256

// LabelTooLongError is a label value past MaxLabelBytes.
type LabelTooLongError struct {
	Label string
	Bytes int
}

func (e *LabelTooLongError) Error() string {
	return fmt.Sprintf("a %s label of %s bytes, more than the %s a disk or node name takes: not used in a query", e.Label,
		units.Commas(int64(e.Bytes)), units.Commas(MaxLabelBytes))
}

// Hint says what to do.
func (e *LabelTooLongError) Hint() string {
	return "name the node exporter's series with --match (e.g. '{job=\"node-exporter\"}') or the disks with --device, so that this series is left out"
}

// QueryBudgetError is a range that needs more range queries at its step
// than the budget allows.
type QueryBudgetError struct {
	Range, Step  time.Duration
	Queries, Max int
	// MaxRange is the longest range at Step, Fits the finest step (whole
	// seconds, or milliseconds below one) at which Range fits.
	MaxRange, Fits time.Duration
}

func (e *QueryBudgetError) Error() string {
	return fmt.Sprintf("%s at step %s needs %s range queries, more than the budget of %s", units.FormatDuration(e.Range),
		units.FormatDuration(e.Step), units.Commas(int64(e.Queries)), units.Commas(int64(e.Max)))
}

// Hint names the largest range at this step and the step that fits the
// range.
func (e *QueryBudgetError) Hint() string {
	return fmt.Sprintf("at step %s the longest range is %s (--since %s); or keep the range with --step %s or coarser",
		units.FormatDuration(e.Step), units.FormatDuration(e.MaxRange), sinceFlag(e.MaxRange), sinceFlag(e.Fits))
}

// sinceFlag writes a duration as --since and --step take it.
func sinceFlag(d time.Duration) string {
	if d >= time.Second {
		d = d.Truncate(time.Second)
	}
	return d.String()
}

// instants is how many evaluation instants a range takes at step (as
// run lays them out, at most one more).
func instants(rng, step time.Duration) int64 { return int64(rng/step) + 1 }

// checkBudget refuses a range whose queries at step are more than the
// budget.
func (o Options) checkBudget(step time.Duration) error {
	rng := o.To.Sub(o.From)
	chunks := (instants(rng, step) + int64(o.ChunkSteps) - 1) / int64(o.ChunkSteps)
	maxChunks := int64(o.MaxQueries / queriesPerChunk)
	if chunks <= maxChunks {
		return nil
	}
	queries := chunks * int64(queriesPerChunk)
	if queries > math.MaxInt32 {
		queries = math.MaxInt32
	}
	most := maxChunks * int64(o.ChunkSteps) // instants within the budget
	e := &QueryBudgetError{Range: rng, Step: step, Queries: int(queries), Max: o.MaxQueries}
	if most > 1 {
		e.MaxRange = time.Duration(most-1) * step
		// The step whose instants fit: whole seconds from a second up,
		// whole milliseconds below.
		fits := time.Duration((int64(rng) + (most - 1) - 1) / (most - 1))
		unit := time.Millisecond
		if fits >= time.Second {
			unit = time.Second
		}
		e.Fits = (fits + unit - 1) / unit * unit
	}
	return e
}

// NoDataError is a selector and range with no disk series.
type NoDataError struct {
	Selector string
	From, To time.Time
}

func (e *NoDataError) Error() string {
	return fmt.Sprintf("no %s series for {%s} between %s and %s", mIOTime, e.Selector,
		e.From.Format(time.RFC3339), e.To.Format(time.RFC3339))
}

// Hint says what to check.
func (e *NoDataError) Hint() string {
	return "check the selector against what Prometheus has (count by (instance, device) (" + mIOTime + ")), and that the range is within its retention"
}

// Analysis is what the history shows.
type Analysis struct {
	Schema     string    `json:"schema"`
	Prometheus string    `json:"prometheus"`
	Selector   string    `json:"selector"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
	StepS      float64   `json:"step_s"`
	// ScrapeIntervalS is the node exporter's, as its samples show it.
	ScrapeIntervalS float64  `json:"scrape_interval_s"`
	Expect          string   `json:"expect,omitempty"`
	Notes           []string `json:"notes"`
	Nodes           []*Node  `json:"nodes"`
}

// Schema names the version of the Analysis document.
const Schema = "iolens.prometheus/v1"

// Node is one node exporter's history.
type Node struct {
	Instance string   `json:"instance"`
	Devices  []string `json:"devices"`
	// Intervals is how many intervals were judged, First and Last the
	// instants of the first and last sample.
	Intervals int       `json:"intervals"`
	First     time.Time `json:"first"`
	Last      time.Time `json:"last"`
	Findings  []Finding `json:"findings"`
	Ceilings  []Ceiling `json:"ceilings"`
	Gaps      []Gap     `json:"gaps"`
	// Dropped counts findings beyond those kept.
	Dropped int `json:"dropped_findings"`

	series map[string]*store
	system *sysStore
}

// Finding is a finding with its absolute time.
type Finding struct {
	Device string `json:"device,omitempty"`
	result.Finding
	Start time.Time `json:"start"`
	// End is when it ended; for a one-off finding (a cliff) it equals
	// Start.
	End time.Time `json:"end"`
	// Ongoing: still going when the range (or the data) ended.
	Ongoing bool `json:"ongoing"`
}

// Gap is a stretch without samples.
type Gap struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Why is the figure that made the interval unknown, when it had
	// samples whose figures no disk gives; empty when it had none.
	Why string `json:"why,omitempty"`
}

// maxFindings bounds the findings kept per node; the rest are counted.
const maxFindings = 500

// Analyze reads the history and judges it. A query Prometheus refuses for
// its size is asked again at twice the step, up to MaxRetries times; the
// notes say so.
func Analyze(ctx context.Context, c *Client, o Options) (*Analysis, error) {
	o = o.withDefaults()
	if !o.To.After(o.From) {
		return nil, hint.Wrap(fmt.Errorf("the range %s to %s is empty", o.From.Format(time.RFC3339), o.To.Format(time.RFC3339)),
			"give --since, or --from before --to")
	}
	for _, d := range o.Devices {
		if len(d) > MaxLabelBytes {
			return nil, &LabelTooLongError{Label: "device", Bytes: len(d)}
		}
	}
	if o.Step > 0 {
		// Refused before any query when the step is known.
		if err := o.checkBudget(max(o.Step, time.Millisecond).Round(time.Millisecond)); err != nil {
			return nil, err
		}
	}
	a := &Analysis{Schema: Schema, Prometheus: c.URL(), Selector: o.Selector.String(), From: o.From, To: o.To, Notes: []string{}, Nodes: []*Node{}}
	if o.Ceiling != nil {
		a.Expect = o.Ceiling.Name
	}
	disc, err := c.discover(ctx, o)
	if err != nil {
		return nil, err
	}
	a.ScrapeIntervalS = disc.interval.Seconds()
	step := o.Step
	if step <= 0 {
		step = disc.interval
	} else if step < disc.interval {
		a.Notes = append(a.Notes, fmt.Sprintf("--step %s is finer than the scrape interval (%s): intervals without a new sample are skipped",
			step, disc.interval))
	}
	step = max(step, time.Millisecond).Round(time.Millisecond)
	if err := o.checkBudget(step); err != nil {
		return nil, err
	}
	// Each query spans the same time whatever the step: a coarser step
	// asks for fewer samples.
	span := time.Duration(o.ChunkSteps) * step
	for try := 0; ; try++ {
		per := max(1, int(span/step))
		nodes, notes, err := c.run(ctx, o, disc, step, per)
		var se *SamplesError
		if errors.As(err, &se) && try < o.MaxRetries {
			msg := fmt.Sprintf("Prometheus refused the queries at step %s (%s): analysed again at step %s", step, se.Msg, 2*step)
			if o.Progress != nil {
				o.Progress(msg)
			}
			a.Notes = append(a.Notes, msg)
			step *= 2
			continue
		}
		if err != nil {
			return nil, err
		}
		a.Notes = append(a.Notes, notes...)
		a.Nodes = nodes
		break
	}
	a.StepS = step.Seconds()
	return a, nil
}

// discovery is what a first look at the data shows.
type discovery struct {
	interval time.Duration
	// phase is where in the interval scrapes land (offset from the epoch
	// modulo the interval).
	phase   time.Duration
	devices map[string][]string // by instance
}

// discover lists the devices of the range and measures the scrape
// interval from raw sample times.
func (c *Client) discover(ctx context.Context, o Options) (discovery, error) {
	d := discovery{devices: map[string][]string{}}
	sel := o.deviceSelector(nil)
	ls, err := c.seriesLabels(ctx, sel.Of(mIOTime), o.From, o.To, o.MaxSeries)
	if err != nil {
		return d, err
	}
	for _, l := range ls {
		inst, dev := l["instance"], l["device"]
		if dev == "" {
			continue
		}
		// Both go into every query (the device) or key every series
		// (the instance): a huge one is refused, never echoed.
		if len(dev) > MaxLabelBytes {
			return d, &LabelTooLongError{Label: "device", Bytes: len(dev)}
		}
		if len(inst) > MaxLabelBytes {
			return d, &LabelTooLongError{Label: "instance", Bytes: len(inst)}
		}
		if !contains(d.devices[inst], dev) {
			d.devices[inst] = append(d.devices[inst], dev)
		}
	}
	if len(d.devices) == 0 {
		return d, &NoDataError{Selector: sel.String(), From: o.From, To: o.To}
	}
	for _, devs := range d.devices {
		sort.Strings(devs)
	}
	iv, phase, err := c.ScrapeInterval(ctx, sel, mIOTime, o.From, o.To, o.MaxSeries)
	if err != nil {
		return d, err
	}
	d.interval, d.phase = iv, phase
	return d, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// deviceSelector is the selector for the devices asked for (all when
// devs is nil: the options' own).
func (o Options) deviceSelector(devs []string) promql.Selector {
	if devs == nil {
		devs = o.Devices
	}
	if len(devs) == 0 {
		return o.Selector
	}
	return o.Selector.With("device", "=~", promql.Alternatives(devs))
}

// run reads the whole range at step and returns each node's findings.
func (c *Client) run(ctx context.Context, o Options, d discovery, step time.Duration, per int) ([]*Node, []string, error) {
	var all []string
	insts := make([]string, 0, len(d.devices))
	for inst, devs := range d.devices {
		insts = append(insts, inst)
		all = append(all, devs...)
	}
	sort.Strings(insts)
	sort.Strings(all)
	uniq := all[:0]
	for i, v := range all {
		if i == 0 || v != all[i-1] {
			uniq = append(uniq, v)
		}
	}
	devSel := o.deviceSelector(uniq)
	nodes := map[string]*nodeRun{}
	var out []*Node
	for _, inst := range insts {
		nr, err := newNodeRun(inst, d.devices[inst], o, step)
		if err != nil {
			return nil, nil, err
		}
		nodes[inst] = nr
		out = append(out, nr.node)
	}
	// The grid sits half an interval after the scrapes, so that jitter
	// does not move a sample from one instant to the next.
	ms := step.Milliseconds()
	first := o.From.UnixMilli()/ms*ms + (d.phase.Milliseconds()+ms/2)%ms
	for first < o.From.UnixMilli() {
		first += ms
	}
	total := int((o.To.UnixMilli()-first)/ms) + 1
	var notes []string
	warned := map[string]bool{}
	for k0 := 0; k0 < total; k0 += per {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		g := grid{start: time.UnixMilli(first + int64(k0)*ms), step: step, n: min(per, total-k0)}
		ch, ws, err := c.chunk(ctx, o, devSel, g)
		if err != nil {
			return nil, nil, err
		}
		for _, w := range ws {
			if !warned[w] && len(warned) < maxWarnings {
				warned[w] = true
				notes = append(notes, "Prometheus warned: "+w)
			}
		}
		for _, inst := range insts {
			if err := nodes[inst].feed(ch, g); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, inst := range insts {
		nodes[inst].finish()
	}
	return out, notes, nil
}

// chunkData is one chunk's columns, by series key.
type chunkData struct {
	ts       map[string][]float64 // instance\x00device: sample time (s)
	counters [len(deviceCounters)]map[string][]float64
	ioNow    map[string][]float64
	iowait   map[string][]float64 // by instance
	cpu      map[string][]float64
	dirty    map[string][]float64
	wb       map[string][]float64
	pressure map[string][]float64
	// disksBusy is io_time summed over every disk of the instance (the
	// selector's) but the stacked ones, by instance: less the analysed
	// devices', the other disks' busy time.
	disksBusy map[string][]float64
}

// DuplicateSeriesError is a selector that gives two series for one
// device (two jobs scraping one exporter, a pair of HA replicas).
type DuplicateSeriesError struct {
	Query string
	A, B  map[string]string
}

func (e *DuplicateSeriesError) Error() string {
	var diff []string
	for k, v := range e.A {
		if e.B[k] != v {
			diff = append(diff, k)
		}
	}
	for k := range e.B {
		if _, ok := e.A[k]; !ok {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	return fmt.Sprintf("%s gives two series for instance %q device %q (they differ in %s)", clip(e.Query), e.A["instance"], e.A["device"], strings.Join(diff, ", "))
}

// Hint says how to pick one.
func (e *DuplicateSeriesError) Hint() string {
	return "pick one with --match, e.g. '{instance=\"...\", job=\"node-exporter\"}'"
}

// chunk runs the queries of one chunk.
func (c *Client) chunk(ctx context.Context, o Options, devSel promql.Selector, g grid) (*chunkData, []string, error) {
	ch := &chunkData{}
	var warns []string
	get := func(q string, perDevice bool, qty units.Quantity) (map[string][]float64, error) {
		limit := o.MaxSeries
		cols, ws, err := c.rangeQuery(ctx, q, g, limit)
		if err != nil {
			return nil, err
		}
		warns = append(warns, ws...)
		out := make(map[string][]float64, len(cols))
		seen := map[string]map[string]string{}
		for _, col := range cols {
			k := col.labels["instance"]
			if perDevice {
				k = key(col.labels)
			}
			if prev, ok := seen[k]; ok {
				return nil, &DuplicateSeriesError{Query: q, A: prev, B: col.labels}
			}
			seen[k] = col.labels
			out[k] = known(col.v, qty)
		}
		return out, nil
	}
	var err error
	if ch.ts, err = get("timestamp("+devSel.Of(mIOTime)+")", true, sampleTime); err != nil {
		return nil, nil, err
	}
	for i, m := range deviceCounters {
		if ch.counters[i], err = get(devSel.Of(m), true, counterQuantity[i]); err != nil {
			return nil, nil, err
		}
	}
	if ch.ioNow, err = get(devSel.Of(mIONow), true, units.DepthFigure); err != nil {
		return nil, nil, err
	}
	sel := o.Selector
	if ch.iowait, err = get("sum by (instance) ("+sel.With("mode", "=", "iowait").Of(mCPU)+")", false, busySeconds); err != nil {
		return nil, nil, err
	}
	if ch.cpu, err = get("sum by (instance) ("+sel.Of(mCPU)+")", false, busySeconds); err != nil {
		return nil, nil, err
	}
	if ch.dirty, err = get(sel.Of(mDirty), false, memoryBytes); err != nil {
		return nil, nil, err
	}
	if ch.wb, err = get(sel.Of(mWriteback), false, memoryBytes); err != nil {
		return nil, nil, err
	}
	if ch.pressure, err = get(sel.Of(mPressure), false, busySeconds); err != nil {
		return nil, nil, err
	}
	if ch.disksBusy, err = get("sum by (instance) ("+sel.With("device", "!~", diskstats.StackedPattern).Of(mIOTime)+")", false, busySeconds); err != nil {
		return nil, nil, err
	}
	return ch, warns, nil
}

// counter follows one counter through resets the way Prometheus's rate()
// and increase() do: a value below the previous one means the counter
// restarted from zero, so the increase is the value itself.
type counter struct {
	last, offset float64
	seen         bool
}

func (c *counter) add(v float64) float64 {
	if c.seen && v < c.last {
		c.offset += c.last
	}
	c.last, c.seen = v, true
	return v + c.offset
}

// whole turns a corrected counter into the kernel's integer units.
func whole(v, unit float64) uint64 {
	x := math.Round(v * unit)
	if x <= 0 || math.IsNaN(x) {
		return 0
	}
	if x >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(x)
}

// nodeRun turns one node's chunks into intervals for its replay.
type nodeRun struct {
	node     *Node
	o        Options
	step     time.Duration
	cfg      watch.Config
	infos    []result.WatchDeviceInfo
	replay   *watch.Replay
	start    time.Time
	prev     *diskstats.Snapshot
	prevMs   int64
	pressure counter
	prevPres float64
	havePres bool
	counters map[string]*counter
	open     map[string]Finding
	ceil     map[string]*ceilings
	gapAfter time.Duration
	// carried gauges and counters when a host series lacks a sample.
	cpuTotal, cpuIowait float64
	dirty, wb           uint64
}

func newNodeRun(inst string, devs []string, o Options, step time.Duration) (*nodeRun, error) {
	n := &Node{Instance: inst, Devices: devs, Findings: []Finding{}, Ceilings: []Ceiling{}, Gaps: []Gap{},
		series: map[string]*store{}, system: newSysStore(o.MaxStored)}
	nr := &nodeRun{node: n, o: o, step: step, counters: map[string]*counter{}, open: map[string]Finding{}, ceil: map[string]*ceilings{},
		gapAfter: 3 * step}
	nr.cfg = watch.Config{Interval: step, Th: o.Th, Ceiling: o.Ceiling, Ceilings: o.Ceilings, Host: inst}
	for _, d := range devs {
		// Cloud volumes and SSDs serve requests in parallel; the node
		// exporter does not say which a device is.
		nr.infos = append(nr.infos, result.WatchDeviceInfo{Name: d, Parallel: true})
		n.series[d] = newStore(o.MaxStored)
		nr.ceil[d] = newCeilings(d, o.Th)
	}
	return nr, nil
}

func (nr *nodeRun) ctr(name string) *counter {
	c := nr.counters[name]
	if c == nil {
		c = &counter{}
		nr.counters[name] = c
	}
	return c
}

// feed takes one chunk.
func (nr *nodeRun) feed(ch *chunkData, g grid) error {
	inst := nr.node.Instance
	for k := 0; k < g.n; k++ {
		// The sample time: the latest of the devices' (they come from one
		// scrape); a device whose own differs has no sample here.
		var tsMs int64 = -1
		for _, d := range nr.node.Devices {
			if col := ch.ts[inst+"\x00"+d]; col != nil && !math.IsNaN(col[k]) {
				tsMs = max(tsMs, int64(math.Round(col[k]*1000)))
			}
		}
		if tsMs < 0 || tsMs <= nr.prevMs {
			continue // no sample, or the one already taken
		}
		cur := diskstats.Snapshot{At: time.UnixMilli(tsMs), Devices: map[string]blockdevice.IOStats{}}
		ownBusy := 0.0 // the analysed devices' io_time as scraped
		for _, d := range nr.node.Devices {
			kd := inst + "\x00" + d
			col := ch.ts[kd]
			if col == nil || math.IsNaN(col[k]) || int64(math.Round(col[k]*1000)) != tsMs {
				continue
			}
			var v [len(deviceCounters)]float64
			ok := true
			for i := range deviceCounters {
				c := ch.counters[i][kd]
				if c == nil || math.IsNaN(c[k]) || c[k] < 0 {
					ok = false
					break
				}
				v[i] = c[k]
			}
			if !ok {
				continue
			}
			if !diskstats.Stacked(d) {
				ownBusy += v[4]
			}
			for i, m := range deviceCounters {
				v[i] = nr.ctr(m + "\x00" + d).add(v[i])
			}
			st := blockdevice.IOStats{ReadIOs: whole(v[0], 1), WriteIOs: whole(v[1], 1),
				ReadSectors: whole(v[2], 1.0/512), WriteSectors: whole(v[3], 1.0/512),
				IOsTotalTicks: whole(v[4], 1000), WeightedIOTicks: whole(v[5], 1000),
				ReadTicks: whole(v[6], 1000), WriteTicks: whole(v[7], 1000)}
			if c := ch.ioNow[kd]; c != nil && !math.IsNaN(c[k]) {
				st.IOsInProgress = whole(c[k], 1)
			}
			cur.Devices[d] = st
		}
		if len(cur.Devices) == 0 {
			continue
		}
		if c := ch.cpu[inst]; c != nil && !math.IsNaN(c[k]) && c[k] >= 0 {
			nr.cpuTotal = nr.ctr(mCPU).add(c[k])
		}
		if c := ch.iowait[inst]; c != nil && !math.IsNaN(c[k]) && c[k] >= 0 {
			nr.cpuIowait = nr.ctr(mCPU + "/iowait").add(c[k])
		}
		if c := ch.dirty[inst]; c != nil && !math.IsNaN(c[k]) {
			nr.dirty = whole(c[k], 1)
		}
		if c := ch.wb[inst]; c != nil && !math.IsNaN(c[k]) {
			nr.wb = whole(c[k], 1)
		}
		cur.CPUTotal, cur.CPUIowait, cur.DirtyBytes, cur.WritebackBytes = nr.cpuTotal, nr.cpuIowait, nr.dirty, nr.wb
		// The raw sum, not a counter followed through resets: a disk that
		// comes or goes moves it either way, and an interval in which it
		// went down counts as one with the other disks idle.
		if c := ch.disksBusy[inst]; c != nil && !math.IsNaN(c[k]) {
			cur.OtherIOTicks = whole(c[k]-ownBusy, 1000)
		}
		pres, havePres := 0.0, false
		if c := ch.pressure[inst]; c != nil && !math.IsNaN(c[k]) && c[k] >= 0 {
			pres, havePres = nr.pressure.add(c[k]), true
		}
		if err := nr.take(cur, pres, havePres); err != nil {
			return err
		}
	}
	return nil
}

// take judges the interval ending at cur.
func (nr *nodeRun) take(cur diskstats.Snapshot, pres float64, havePres bool) error {
	defer func() {
		nr.prevMs = cur.At.UnixMilli()
		nr.prevPres, nr.havePres = pres, havePres
	}()
	n := nr.node
	switch {
	case nr.prev != nil && cur.At.Sub(nr.prev.At) > nr.gapAfter:
		n.Gaps = append(n.Gaps, Gap{From: nr.prev.At, To: cur.At})
		nr.close(nr.prev.At)
	case nr.prev != nil && nr.replay != nil:
		// An interval whose figures no disk gives is unknown: a gap, not
		// a stall or a storm.
		if why := implausible(diskstats.Diff(*nr.prev, cur)); why != "" {
			n.Gaps = append(n.Gaps, Gap{From: nr.prev.At, To: cur.At, Why: why})
			nr.close(nr.prev.At)
		}
	}
	if nr.replay == nil {
		rp, err := watch.NewReplay(nr.cfg, nr.infos)
		if err != nil {
			return err
		}
		nr.replay, nr.start = rp, cur.At
		rp.Start(cur.At)
		if n.First.IsZero() {
			n.First = cur.At
		}
		nr.prev = &cur
		return nil
	}
	dt := cur.At.Sub(nr.prev.At)
	tk := diskstats.Diff(*nr.prev, cur)
	tk.System.IowaitPct = math.Min(100, math.Max(0, tk.System.IowaitPct))
	pressurePct := -1.0
	if havePres && nr.havePres && dt > 0 {
		pressurePct = math.Min(100, math.Max(0, (pres-nr.prevPres)/dt.Seconds()*100))
	}
	recs, err := nr.replay.Step(tk, dt, pressurePct)
	if err != nil {
		return err
	}
	nr.prev = &cur
	n.Intervals++
	n.Last = cur.At
	for i := range recs {
		nr.record(&recs[i], dt, pressurePct)
	}
	return nil
}

// othersBusy is how much of a sample record's interval the disks other
// than dev kept busy, summed: the other analysed devices' utilization
// and the rest of the node's disks' (SystemSample.OtherUtilPct), stacked
// devices left out. History does not say which disks a stacked device
// sits on: for one, its own disks count among the others, which only
// makes the host's waiting harder to pin on it.
func othersBusy(r *result.WatchRecord, dev string) float64 {
	var b float64
	if r.System != nil {
		b = r.System.OtherUtilPct
	}
	for _, d := range r.Devices {
		if d.Device != dev && !diskstats.Stacked(d.Device) {
			b += d.UtilPct
		}
	}
	return b
}

// record keeps what one replay record says.
func (nr *nodeRun) record(r *result.WatchRecord, dt time.Duration, pressurePct float64) {
	n := nr.node
	switch r.Type {
	case result.WatchTypeSample:
		for i := range r.Devices {
			row := &r.Devices[i]
			n.series[row.Device].add(r.Time, dt, row.DeviceSample)
			nr.ceil[row.Device].add(r.Time, dt.Seconds(), &row.DeviceSample, row.State, r.System, pressurePct, othersBusy(r, row.Device))
		}
		if r.System != nil {
			n.system.add(r.Time, dt, *r.System)
		}
	case result.WatchTypeFinding:
		f := r.Finding
		if f == nil || f.StartS == nil {
			return
		}
		at := nr.start.Add(time.Duration(*f.StartS * float64(time.Second)))
		k := f.Device + "/" + f.Kind
		switch f.Phase {
		case "start":
			nr.open[k] = Finding{Device: f.Device, Finding: f.Finding, Start: at}
		case "end":
			delete(nr.open, k)
			end := at
			if f.DurationS != nil {
				end = at.Add(time.Duration(*f.DurationS * float64(time.Second)))
			}
			nr.keep(Finding{Device: f.Device, Finding: f.Finding, Start: at, End: end})
		case result.PhaseWithdrawn:
			delete(nr.open, k)
		default:
			start := at
			if bs, ok := f.Evidence["burst_start_s"]; ok && f.Kind == result.KindCliff {
				// A cliff is where the rate dropped; it spans the burst
				// that ended there.
				start = nr.start.Add(time.Duration(bs * float64(time.Second)))
			}
			nr.keep(Finding{Device: f.Device, Finding: f.Finding, Start: start, End: at})
		}
	}
}

func (nr *nodeRun) keep(f Finding) {
	n := nr.node
	if len(n.Findings) >= maxFindings {
		n.Dropped++
		return
	}
	n.Findings = append(n.Findings, f)
}

// close ends the replay at the last sample: what its detectors hold, and
// the conditions still open, which last until then.
func (nr *nodeRun) close(at time.Time) {
	if nr.replay == nil {
		return
	}
	for _, r := range nr.replay.Flush(at) {
		nr.record(&r, 0, -1)
	}
	keys := make([]string, 0, len(nr.open))
	for k := range nr.open {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := nr.open[k]
		f.End, f.Ongoing = at, true
		d := at.Sub(f.Start).Seconds()
		f.DurationS = &d
		nr.keep(f)
	}
	nr.open = map[string]Finding{}
	nr.replay = nil
}

// finish ends the node's analysis.
func (nr *nodeRun) finish() {
	n := nr.node
	if nr.prev != nil {
		nr.close(nr.prev.At)
	}
	for _, d := range n.Devices {
		cs := nr.ceil[d].flush()
		for i := range cs {
			if nr.o.Catalog != nil {
				iops, bw := 0.0, 0.0
				if cs[i].Code == result.CodeIOPSCap {
					iops = cs[i].IOPS
				} else {
					bw = cs[i].BWBytes
				}
				cs[i].Fits = nr.o.Catalog(iops, bw)
			}
		}
		n.Ceilings = append(n.Ceilings, cs...)
	}
	sort.SliceStable(n.Findings, func(i, j int) bool { return n.Findings[i].Start.Before(n.Findings[j].Start) })
}
