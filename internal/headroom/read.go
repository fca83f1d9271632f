package headroom

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/units"
)

// The node exporter's series read, in the order of a chunk's columns:
// the sample time first, then the counters.
const mIOTime = "node_disk_io_time_seconds_total"

// The node exporter's counters, and the sums of them read: read and
// write IOs, bytes and time, each summed by Prometheus (a cap counts
// reads and writes together), so that a chunk is four queries.
const (
	mReads        = "node_disk_reads_completed_total"
	mWrites       = "node_disk_writes_completed_total"
	mReadBytes    = "node_disk_read_bytes_total"
	mWrittenBytes = "node_disk_written_bytes_total"
	mReadTime     = "node_disk_read_time_seconds_total"
	mWriteTime    = "node_disk_write_time_seconds_total"
)

var counters = [...][2]string{{mReads, mWrites}, {mReadBytes, mWrittenBytes}, {mReadTime, mWriteTime}}

// Run reads the history of every device the selector has and judges it.
func Run(ctx context.Context, c *promhist.Client, o Options) (*Report, error) {
	o = o.withDefaults()
	if !o.To.After(o.From) {
		return nil, hint.Wrap(fmt.Errorf("the range %s to %s is empty", o.From.Format(time.RFC3339), o.To.Format(time.RFC3339)),
			"give --since, or --from before --to")
	}
	rep := &Report{Schema: Schema, Prometheus: c.URL(), Selector: o.Selector.String(), From: o.From, To: o.To,
		MarginPct: o.Margin * 100, CreditStartPct: o.CreditStart * 100, Notes: []string{}, Volumes: []*Volume{}, Nodes: []*Node{}}
	r := &reader{c: c, o: o, rep: rep, vols: map[string]*Volume{}, nodes: map[string]*nodeAcc{}}
	if err := r.discover(ctx); err != nil {
		return nil, err
	}
	if err := r.read(ctx); err != nil {
		return nil, err
	}
	if err := r.readProvider(ctx); err != nil {
		return nil, err
	}
	r.finish()
	return rep, nil
}

type reader struct {
	c     *promhist.Client
	o     Options
	rep   *Report
	vols  map[string]*Volume // instance\x00device
	nodes map[string]*nodeAcc
	insts []string
	step  time.Duration
	phase time.Duration
}

func vkey(inst, dev string) string { return inst + "\x00" + dev }

// discover lists the devices and the scrape interval.
func (r *reader) discover(ctx context.Context) error {
	o := r.o
	ls, err := r.c.SeriesLabels(ctx, o.Selector.Of(mIOTime), o.From, o.To, o.MaxSeries)
	if err != nil {
		return err
	}
	if len(ls) == 0 {
		// Is there a node exporter at all, or does the selector miss it?
		_, err := r.c.SeriesLabels(ctx, mIOTime, o.From, o.To, 0)
		var many *promhist.TooManySeriesError
		if err != nil && !errors.As(err, &many) {
			return err
		}
		if err == nil {
			return &NoNodeExporterError{Prometheus: r.c.URL(), From: o.From, To: o.To}
		}
		return &promhist.NoDataError{Selector: o.Selector.String(), From: o.From, To: o.To}
	}
	named := map[string]bool{}
	for _, ru := range o.Rules {
		if ru.Device != "" {
			named[ru.Device] = true
		}
	}
	seen := map[string]map[string]string{}
	var skipped []string
	for _, l := range ls {
		inst, dev := l["instance"], l["device"]
		if dev == "" {
			continue
		}
		k := vkey(inst, dev)
		if prev, ok := seen[k]; ok {
			return &promhist.DuplicateSeriesError{Query: o.Selector.Of(mIOTime), A: prev, B: l}
		}
		seen[k] = l
		if diskstats.Stacked(dev) && !named[dev] {
			skipped = append(skipped, inst+" "+dev)
			continue
		}
		cp, claim, unknown, volID := o.capOf(inst, dev)
		v := &Volume{Instance: inst, Device: dev, Claim: claim, OSDiskOf: o.osDiskOf(inst, dev), VolumeID: volID, Cap: cp, Gaps: []Gap{}, Band: []BandPoint{}}
		if cp == nil {
			v.CapUnknown = unknown
		}
		r.vols[k] = v
		n := r.nodes[inst]
		if n == nil {
			n = newNodeAcc(inst, o)
			r.nodes[inst] = n
			r.insts = append(r.insts, inst)
		}
		n.vols = append(n.vols, v)
		n.node.Devices = append(n.node.Devices, dev)
	}
	if len(skipped) > 0 {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("%d stacked devices (dm-N, mdN) left out: their IO shows again on the disks under them; name one with --expect to judge it", len(skipped)))
	}
	// Volumes a rule names that Prometheus does not have.
	for _, ru := range o.Rules {
		if ru.Device == "" {
			continue
		}
		found := false
		for _, v := range r.vols {
			if ru.matches(v.Instance, v.Device) {
				found = true
				break
			}
		}
		if !found {
			v := &Volume{Instance: ru.Instance, Device: ru.Device, Claim: ru.Claim, Cap: ru.Cap, CapUnknown: ru.Unknown, Status: StatusNoData, Gaps: []Gap{}, Band: []BandPoint{},
				Why: "no node exporter series for this device in the range (is its node scraped, and the device named as the node exporter names it?)"}
			r.rep.Volumes = append(r.rep.Volumes, v)
		}
	}
	sort.Strings(r.insts)
	for _, n := range r.nodes {
		sort.Strings(n.node.Devices)
		sort.Slice(n.vols, func(i, j int) bool { return n.vols[i].Device < n.vols[j].Device })
	}
	iv, phase, err := r.c.ScrapeInterval(ctx, o.Selector, mIOTime, o.From, o.To, o.MaxSeries)
	if err != nil {
		return err
	}
	r.rep.ScrapeIntervalS = iv.Seconds()
	r.phase = phase
	step := o.Step
	if step <= 0 {
		step = iv
	} else if step < iv {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("--step %s is finer than the scrape interval (%s): instants without a new sample are passed over", units.FormatDuration(step), units.FormatDuration(iv)))
	}
	step = max(step, time.Second).Round(time.Second)
	if rng := o.To.Sub(o.From); int64(rng/step) > int64(o.MaxSteps) {
		coarser := (rng / time.Duration(o.MaxSteps)).Round(time.Second) + time.Second
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("%s at a %s step is more than %s instants: read at a %s step; each rate is the mean over its step, so a peak shorter than a step is averaged into it",
			units.FormatDuration(rng), units.FormatDuration(step), units.Commas(int64(o.MaxSteps)), units.FormatDuration(coarser)))
		step = coarser
	}
	r.step = step
	r.rep.StepS = step.Seconds()
	return nil
}

// read asks for the range chunk by chunk, all devices of a metric in one
// query; a chunk Prometheus refuses for its size is asked again in
// halves.
func (r *reader) read(ctx context.Context) error {
	o := r.o
	ms := r.step.Milliseconds()
	first := o.From.UnixMilli()/ms*ms + (r.phase.Milliseconds()+ms/2)%ms
	for first < o.From.UnixMilli() {
		first += ms
	}
	total := int((o.To.UnixMilli()-first)/ms) + 1
	nSeries := max(1, len(r.vols))
	per := max(1, min(o.ChunkSteps, o.ChunkPoints/nSeries))
	warned := map[string]bool{}
	lastTenth := -1
	retries := 0
	for k0 := 0; k0 < total; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(per, total-k0)
		g := promhist.Grid{Start: time.UnixMilli(first + int64(k0)*ms), Step: r.step, N: n}
		ch, ws, err := r.chunk(ctx, g)
		var se *promhist.SamplesError
		if errors.As(err, &se) && per > 1 && retries < o.MaxRetries {
			retries++
			per = max(1, per/2)
			msg := fmt.Sprintf("Prometheus refused a query for its size (%s): asking for %s instants at a time", se.Msg, units.Commas(int64(per)))
			r.rep.Notes = append(r.rep.Notes, msg)
			if o.Progress != nil {
				o.Progress(msg)
			}
			continue
		}
		if err != nil {
			return err
		}
		for _, w := range ws {
			if !warned[w] && len(warned) < 3 {
				warned[w] = true
				r.rep.Notes = append(r.rep.Notes, "Prometheus warned: "+w)
			}
		}
		for _, inst := range r.insts {
			r.nodes[inst].feed(ch, g, r)
		}
		k0 += n
		if tenth := k0 * 10 / total; o.Progress != nil && tenth != lastTenth {
			lastTenth = tenth
			o.Progress(fmt.Sprintf("read %s of %s instants of %d devices (%d%%)", units.Commas(int64(k0)), units.Commas(int64(total)), len(r.vols), k0*100/total))
		}
	}
	return nil
}

// chunk is one chunk's columns: the sample times, then the counters, by
// instance\x00device.
type chunk struct {
	ts  map[string][]float64
	ctr [len(counters)]map[string][]float64
}

func (r *reader) chunk(ctx context.Context, g promhist.Grid) (*chunk, []string, error) {
	ch := &chunk{}
	var warns []string
	get := func(q string) (map[string][]float64, error) {
		cols, ws, err := r.c.Range(ctx, q, g, r.o.MaxSeries)
		if err != nil {
			return nil, err
		}
		warns = append(warns, ws...)
		out := make(map[string][]float64, len(cols))
		seen := make(map[string]map[string]string, len(cols))
		for _, col := range cols {
			k := vkey(col.Labels["instance"], col.Labels["device"])
			if prev, ok := seen[k]; ok {
				return nil, &promhist.DuplicateSeriesError{Query: q, A: prev, B: col.Labels}
			}
			seen[k] = col.Labels
			if _, ok := r.vols[k]; ok {
				out[k] = col.V
			}
		}
		return out, nil
	}
	var err error
	if ch.ts, err = get("timestamp(" + r.o.Selector.Of(mIOTime) + ")"); err != nil {
		return nil, nil, err
	}
	for i, m := range counters {
		if ch.ctr[i], err = get(r.o.Selector.Of(m[0]) + " + " + r.o.Selector.Of(m[1])); err != nil {
			return nil, nil, err
		}
	}
	return ch, warns, nil
}

// volAcc is a volume's running state: its last sample, the credit
// buckets, and the bounded summaries.
type volAcc struct {
	prevMs   int64
	prev     [len(counters)]float64
	have     bool
	firstMs  int64
	lastMs   int64
	ios, bys *limits.Bucket
	iops     sketch
	bw       sketch
	await    sketch
	pct      sketch
	band     band
	// this step's interval, for the node's sum.
	ok              bool
	dt, rIOPS, rBW  float64
	rPct            float64
	capKnown, atCap bool
	creditMin       float64
	creditMinMs     int64
	atCapFirst      int64
	atCapLast       int64
}

// band keeps a series' per-step share in fixed slots over the range.
type band struct {
	from  time.Time
	slot  time.Duration
	max   []float64
	sum   []float64
	count []uint32
}

func newBand(from, to time.Time, n int) band {
	slot := max(to.Sub(from)/time.Duration(n), time.Second)
	k := int(to.Sub(from)/slot) + 1
	return band{from: from, slot: slot, max: make([]float64, k), sum: make([]float64, k), count: make([]uint32, k)}
}

func (b *band) add(t time.Time, pct float64) {
	i := int(t.Sub(b.from) / b.slot)
	if i < 0 || i >= len(b.max) {
		return
	}
	b.max[i] = math.Max(b.max[i], pct)
	b.sum[i] += pct
	b.count[i]++
}

func (b *band) points() []BandPoint {
	out := []BandPoint{}
	for i := range b.max {
		if b.count[i] == 0 {
			continue
		}
		out = append(out, BandPoint{T: b.from.Add(time.Duration(i) * b.slot), MaxPct: b.max[i], MeanPct: b.sum[i] / float64(b.count[i])})
	}
	return out
}

func newVolAcc(v *Volume, o Options) *volAcc {
	a := &volAcc{band: newBand(o.From, o.To, o.BandPoints), creditMin: math.NaN(), atCapFirst: -1}
	if c := v.Cap; c.bursts() {
		bi := limits.NewCreditBurst(limits.Rate{IOPS: c.IOPS, BWBytes: c.BWBytes}, limits.Rate{IOPS: c.BurstIOPS, BWBytes: c.BurstBWBytes}, c.BurstSeconds)
		a.ios, a.bys = bi.Buckets(o.CreditStart)
	}
	return a
}

// step takes the samples at instant k of the chunk: an interval when a
// new sample follows one close enough before it.
func (v *Volume) step(ch *chunk, k int, step time.Duration, maxGaps int) {
	a := v.acc
	a.ok = false
	key := vkey(v.Instance, v.Device)
	tsCol := ch.ts[key]
	if tsCol == nil || math.IsNaN(tsCol[k]) {
		return
	}
	tsMs := int64(math.Round(tsCol[k] * 1000))
	if a.have && tsMs <= a.prevMs {
		return // the sample already taken
	}
	var cur [len(counters)]float64
	for i := range counters {
		col := ch.ctr[i][key]
		if col == nil || math.IsNaN(col[k]) || col[k] < 0 {
			return
		}
		cur[i] = col[k]
	}
	prev, prevMs, had := a.prev, a.prevMs, a.have
	a.prev, a.prevMs, a.have = cur, tsMs, true
	if a.firstMs == 0 {
		a.firstMs = tsMs
	}
	a.lastMs = tsMs
	if !had {
		return
	}
	dtMs := tsMs - prevMs
	if time.Duration(dtMs)*time.Millisecond > 3*step {
		if len(v.Gaps) < maxGaps {
			v.Gaps = append(v.Gaps, Gap{From: time.UnixMilli(prevMs), To: time.UnixMilli(tsMs)})
		} else {
			v.GapsDropped++
		}
		return
	}
	var d [len(counters)]float64
	for i := range cur {
		// A counter that went down restarted from zero, as rate() takes
		// it.
		if d[i] = cur[i] - prev[i]; d[i] < 0 {
			d[i] = cur[i]
		}
	}
	dt := float64(dtMs) / 1000
	ios, bytes := d[0], d[1]
	counted := ios
	if c := v.Cap; c != nil && c.IOUnitBytes > 0 && ios > 0 {
		// The provider counts a large IO as several: from the step's mean
		// IO size.
		counted = ios * math.Max(1, math.Ceil(bytes/ios/c.IOUnitBytes))
	}
	iops, bw := counted/dt, bytes/dt
	a.ok, a.dt, a.rIOPS, a.rBW = true, dt, iops, bw
	v.Intervals++
	v.CoveredS += dt
	a.iops.add(iops)
	a.bw.add(bw)
	if ios > 0 {
		a.await.add(d[2] / ios * 1000)
	}
	a.capKnown, a.atCap = false, false
	c := v.Cap
	if c == nil {
		return
	}
	li, lb := c.IOPS, c.BWBytes
	if a.ios != nil {
		li = a.ios.Limit()
	}
	if a.bys != nil {
		lb = a.bys.Limit()
	}
	pct := 0.0
	if li > 0 {
		pct = iops / li * 100
	}
	if lb > 0 {
		pct = math.Max(pct, bw/lb*100)
	}
	a.capKnown, a.rPct = true, pct
	a.pct.add(pct)
	at := time.UnixMilli(tsMs)
	a.band.add(at, pct)
	if pct >= AtCapPct {
		a.atCap = true
		v.AtCapS += dt
		if a.atCapFirst < 0 {
			a.atCapFirst = prevMs
		}
		a.atCapLast = tsMs
	}
	if a.ios != nil || a.bys != nil {
		lvl := 100.0
		if a.ios != nil {
			a.ios.Use(counted, dt)
			lvl = math.Min(lvl, 100*a.ios.Level())
		}
		if a.bys != nil {
			a.bys.Use(bytes, dt)
			lvl = math.Min(lvl, 100*a.bys.Level())
		}
		if math.IsNaN(a.creditMin) || lvl < a.creditMin {
			a.creditMin, a.creditMinMs = lvl, tsMs
		}
	}
}

// nodeAcc sums a node's volumes step by step against its VM's caps.
type nodeAcc struct {
	node  *Node
	vols  []*Volume
	iops  sketch
	bw    sketch
	pct   sketch
	band  band
	first int64
	o     Options
	// The VM's credit buckets, when it bursts on credit.
	ios, bys *limits.Bucket
}

func newNodeAcc(inst string, o Options) *nodeAcc {
	n := &nodeAcc{node: &Node{Instance: inst, Band: []BandPoint{}}, band: newBand(o.From, o.To, o.BandPoints), first: -1, o: o}
	vm := o.VMs[inst]
	if vm == "" {
		vm = o.DefaultVM
	}
	n.node.VM = vm
	switch {
	case vm == "":
		n.node.VMUnknown = "no VM size given (--vm, or the mapping file's nodes)"
	case o.Catalog == nil:
		n.node.VMUnknown = "no catalog"
	default:
		v := o.Catalog.VM(vm)
		switch {
		case v == nil:
			n.node.VMUnknown = "VM size " + vm + " is not in the catalog"
		case v.Uncached == nil:
			n.node.VMUnknown = vm + " has no published cap for all its disks together in the catalog"
		default:
			ub := 1e6
			if v.Unit == "MiB/s" {
				ub = 1 << 20
			}
			n.node.VM = v.ID
			n.node.VMIOPS, n.node.VMBWBytes = v.Uncached.IOPS, v.Uncached.Tput*ub
			if b := v.BurstAt(""); b != nil && b.Model == "credit" && b.Seconds > 0 {
				base := limits.Rate{IOPS: n.node.VMIOPS, BWBytes: n.node.VMBWBytes}
				n.node.VMBurstIOPS, n.node.VMBurstBWBytes, n.node.VMBurstS = b.IOPS, b.Tput*ub, b.Seconds
				if bi := limits.NewCreditBurst(base, limits.Rate{IOPS: b.IOPS, BWBytes: b.Tput * ub}, b.Seconds); bi != nil {
					n.ios, n.bys = bi.Buckets(o.CreditStart)
				}
			}
		}
	}
	return n
}

// feed takes one chunk: each volume's intervals, then their sum.
func (n *nodeAcc) feed(ch *chunk, g promhist.Grid, r *reader) {
	for _, v := range n.vols {
		if v.acc == nil {
			v.acc = newVolAcc(v, r.o)
		}
	}
	nd := n.node
	for k := 0; k < g.N; k++ {
		var iops, bw, dt float64
		var at int64
		any := false
		for _, v := range n.vols {
			v.step(ch, k, r.step, r.o.MaxGaps)
			if v.acc.ok {
				any = true
				iops += v.acc.rIOPS
				bw += v.acc.rBW
				dt = math.Max(dt, v.acc.dt)
				at = max(at, v.acc.lastMs)
			}
		}
		if !any {
			continue
		}
		n.iops.add(iops)
		n.bw.add(bw)
		if nd.VMIOPS <= 0 && nd.VMBWBytes <= 0 {
			continue
		}
		li, lb := nd.VMIOPS, nd.VMBWBytes
		if n.ios != nil {
			li = n.ios.Limit()
			n.ios.Use(iops*dt, dt)
		}
		if n.bys != nil {
			lb = n.bys.Limit()
			n.bys.Use(bw*dt, dt)
		}
		pi, pb := 0.0, 0.0
		if li > 0 {
			pi = iops / li * 100
		}
		if lb > 0 {
			pb = bw / lb * 100
		}
		pct := math.Max(pi, pb)
		n.pct.add(pct)
		n.band.add(time.UnixMilli(at), pct)
		if pct < AtCapPct {
			continue
		}
		nd.AtCapS += dt
		if pi >= AtCapPct {
			nd.AtCapIOPSS += dt
		}
		if pb >= AtCapPct {
			nd.AtCapBWS += dt
		}
		if n.first < 0 {
			n.first = at
		}
		// A volume the VM held: below its own cap, with a real share (a
		// twentieth or more) of the sum on the cap that binds.
		for _, v := range n.vols {
			a := v.acc
			if !a.ok || !a.capKnown || a.atCap {
				continue
			}
			if pi >= AtCapPct && a.rIOPS >= iops/20 || pb >= AtCapPct && a.rBW >= bw/20 {
				v.VMBoundS += a.dt
			}
		}
	}
}

func stats(s *sketch) Stats {
	if s.n == 0 {
		return Stats{}
	}
	return Stats{P50: s.quantile(0.5), P99: s.quantile(0.99), Max: s.max}
}

// finish turns the running state into the report.
func (r *reader) finish() {
	o := r.o
	rng := o.To.Sub(o.From)
	for _, inst := range r.insts {
		n := r.nodes[inst]
		nd := n.node
		nd.IOPS, nd.BWBytes = stats(&n.iops), stats(&n.bw)
		if n.pct.n > 0 {
			s := stats(&n.pct)
			nd.CapPct = &s
		}
		if n.first >= 0 {
			t := time.UnixMilli(n.first)
			nd.AtCapFirst = &t
		}
		switch {
		case nd.AtCapIOPSS >= nd.AtCapBWS && nd.AtCapIOPSS > 0:
			nd.Binds = "VM IOPS"
		case nd.AtCapBWS > 0:
			nd.Binds = "VM throughput"
		}
		nd.Band = n.band.points()
		r.rep.Nodes = append(r.rep.Nodes, nd)
		for _, v := range n.vols {
			r.finishVolume(v, rng)
			r.rep.Volumes = append(r.rep.Volumes, v)
		}
	}
	recommend(r.rep, o)
	rank(r.rep)
	r.rep.Totals = totals(r.rep)
	r.rep.Verdict = verdict(r.rep)
}

func (r *reader) finishVolume(v *Volume, rng time.Duration) {
	a := v.acc
	if a == nil {
		a = newVolAcc(v, r.o)
		v.acc = a
	}
	gapAfter := 3 * r.step
	if a.have {
		if first := time.UnixMilli(a.firstMs); first.Sub(r.o.From) > gapAfter {
			v.Gaps = append([]Gap{{From: r.o.From, To: first}}, v.Gaps...)
		}
		if last := time.UnixMilli(a.lastMs); r.o.To.Sub(last) > gapAfter {
			v.Gaps = append(v.Gaps, Gap{From: last, To: r.o.To})
		}
	}
	v.IOPS, v.BWBytes, v.AwaitMs = stats(&a.iops), stats(&a.bw), stats(&a.await)
	if a.pct.n > 0 {
		s := stats(&a.pct)
		v.CapPct = &s
	}
	if !math.IsNaN(a.creditMin) {
		c := a.creditMin
		v.CreditMinPct, v.CreditMinAt = &c, time.UnixMilli(a.creditMinMs)
	}
	if a.atCapFirst >= 0 {
		f, l := time.UnixMilli(a.atCapFirst), time.UnixMilli(a.atCapLast)
		v.AtCapFirst, v.AtCapLast = &f, &l
	}
	v.Band = a.band.points()
	v.compareProvider(r.step.Seconds())
	cov := v.CoveredS / rng.Seconds()
	switch {
	case v.Intervals == 0:
		v.Status = StatusNoData
		v.Why = "no two samples close enough to make an interval in the range"
		if len(v.Gaps) > 0 {
			v.Why = "no interval outside its gaps"
		}
	case v.Cap == nil:
		v.Status = StatusUnknown
		v.Why = "its cap is unknown (" + v.CapUnknown + "): use is shown, no share of a cap"
	case v.AtCapS > 0:
		v.Status = StatusAtCap
		v.Why = fmt.Sprintf("at %d%% or more of its cap for %s", AtCapPct, units.FormatSeconds(v.AtCapS))
	case v.CapPct.P99 >= NearPct:
		v.Status = StatusNear
		v.Why = fmt.Sprintf("p99 at %s of its cap", units.Share(v.CapPct.P99/100))
	case v.CapPct.P99 < IdlePct:
		v.Status = StatusIdle
		v.Why = fmt.Sprintf("p99 at %s of its cap", units.Share(v.CapPct.P99/100))
	default:
		v.Status = StatusOK
		v.Why = fmt.Sprintf("p99 at %s of its cap", units.Share(v.CapPct.P99/100))
	}
	if v.Intervals > 0 && cov < 0.9 {
		v.Why += fmt.Sprintf("; samples cover only %s of the range (%d gaps)", units.Share(cov), len(v.Gaps)+v.GapsDropped)
	}
	v.acc = nil
}
