package fio

// fio's JSON changed units and keys over the years (stat.c's JSON
// writer, by release; docs/fio-compat.md has the whole table):
//
//	2.0.10  JSON output: io_bytes in KiB, bw in KiB/s, iops an integer,
//	        slat/clat/lat objects in µs, clat.percentile in µs, and
//	        "0.00": 0 filler entries when percentiles were off.
//	2.1.10  latency_target (µs) and latency_window (µs).
//	2.1.14  total_ios, short_ios, drop_ios.
//	2.2.8   iops a float.
//	2.2.12  json+ bins under clat, keyed by bucket index, with the
//	        FIO_IO_U_PLAT_BITS/VAL/NR constants beside them (µs grid).
//	2.3     job options and global options.
//	2.20    json+ bins keyed by the bucket's µs value.
//	2.21    io_bytes in bytes; io_kbytes beside it.
//	2.99    slat_ns/clat_ns/lat_ns in ns, percentiles and bins in ns.
//	3.2     bw_bytes.
//	3.3     latency_target in ns, and latency_window too (until 3.21).
//	3.4     the sync section (lat_ns, total_ios).
//	3.18    N in every latency object; percentiles only when collected.
//	3.27    unified_rw_reporting=both writes mixed beside read/write.
//	3.39    client mode's global options become one object per server.
//
// Decoding brings all of it to 3.x's: bytes, bytes/s, ns, and N.

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
)

// jnum is a number of fio's JSON that says whether it was there, and
// whether it was null: fio's bare nan and inf are read as null (see
// Decode), and fio writes no null of its own, so null is a figure fio
// could not compute. It is unknown, never 0.
type jnum struct {
	v         float64
	set, null bool
}

func (n *jnum) UnmarshalJSON(b []byte) error {
	n.set = true
	if string(b) == "null" {
		n.null = true
		return nil
	}
	return json.Unmarshal(b, &n.v)
}

// known says the number is there and is a number.
func (n jnum) known() bool { return n.set && !n.null }

// rawLat is a latency object as any fio version wrote it.
type rawLat struct {
	Min        jnum              `json:"min"`
	Max        jnum              `json:"max"`
	Mean       jnum              `json:"mean"`
	Stddev     float64           `json:"stddev"`
	N          *uint64           `json:"N"`
	Percentile map[string]jnum   `json:"percentile"`
	Bins       map[string]uint64 `json:"bins"`
}

// rawDir is a direction as any fio version wrote it.
type rawDir struct {
	IOBytes  jnum    `json:"io_bytes"`
	IOKBytes jnum    `json:"io_kbytes"`
	BWBytes  jnum    `json:"bw_bytes"`
	BW       jnum    `json:"bw"`
	IOPS     jnum    `json:"iops"`
	Runtime  jnum    `json:"runtime"`
	TotalIOs jnum    `json:"total_ios"`
	ShortIOs int64   `json:"short_ios"`
	DropIOs  int64   `json:"drop_ios"`
	SlatNs   *rawLat `json:"slat_ns"`
	ClatNs   *rawLat `json:"clat_ns"`
	LatNs    *rawLat `json:"lat_ns"`
	Slat     *rawLat `json:"slat"`
	Clat     *rawLat `json:"clat"`
	Lat      *rawLat `json:"lat"`
	BWMin    float64 `json:"bw_min"`
	BWMax    float64 `json:"bw_max"`
	BWMean   float64 `json:"bw_mean"`
	BWDev    float64 `json:"bw_dev"`
	IOPSMin  float64 `json:"iops_min"`
	IOPSMax  float64 `json:"iops_max"`
	IOPSMean float64 `json:"iops_mean"`
	IOPSDev  float64 `json:"iops_stddev"`
}

// UnmarshalJSON reads a direction of any fio version in 3.x's units.
func (d *DirStats) UnmarshalJSON(b []byte) error {
	var r rawDir
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	*d = DirStats{IOBytes: int64(r.IOBytes.v), BW: int64(r.BW.v), IOPS: r.IOPS.v, Runtime: int64(r.Runtime.v), ShortIOs: r.ShortIOs,
		DropIOs: r.DropIOs, BWMin: r.BWMin, BWMax: r.BWMax, BWMean: r.BWMean, BWDev: r.BWDev,
		IOPSMin: r.IOPSMin, IOPSMax: r.IOPSMax, IOPSMean: r.IOPSMean, IOPSDev: r.IOPSDev}
	// A figure fio wrote as nan is taken from the others where they
	// hold it (fio computed each from the count, bytes and runtime), and
	// is otherwise unknown: the direction is refused, naming it.
	unknown := func(field string) { d.nan = append(d.nan, field) }
	if r.Runtime.null {
		unknown("runtime")
	}
	rt := float64(d.Runtime)
	switch {
	case r.IOKBytes.set:
		// From 2.21 io_bytes is in bytes, io_kbytes beside it (even
		// when fio wrote it as nan).
		if !r.IOBytes.known() {
			if r.IOKBytes.known() {
				d.IOBytes = int64(r.IOKBytes.v) * 1024
			} else {
				unknown("io_bytes")
			}
		}
	case r.IOBytes.null:
		unknown("io_bytes")
	default:
		d.IOBytes = int64(r.IOBytes.v) * 1024 // KiB before 2.21
	}
	switch {
	case r.TotalIOs.known():
		d.TotalIOs = int64(r.TotalIOs.v)
	case r.TotalIOs.null && !r.IOPS.known():
		unknown("total_ios")
	case rt > 0 && r.IOPS.known():
		// Before 2.1.14 only the rate: fio computed it from the count.
		d.TotalIOs = int64(math.Round(r.IOPS.v * rt / 1000))
	}
	if r.IOPS.null {
		if d.TotalIOs > 0 && rt > 0 {
			d.IOPS = float64(d.TotalIOs) * 1000 / rt
		} else if d.TotalIOs > 0 || !r.TotalIOs.set {
			unknown("iops")
		}
	}
	switch {
	case r.BWBytes.known():
		d.BWBytes = int64(r.BWBytes.v)
	case d.IOBytes > 0 && rt > 0:
		d.BWBytes = d.IOBytes * 1000 / d.Runtime // fio's own formula for bw_bytes
	case r.BW.known():
		d.BWBytes = int64(r.BW.v) * 1024
	case r.BW.null || r.BWBytes.null:
		unknown("bw_bytes")
	}
	pick := func(ns, us *rawLat) LatStats {
		switch {
		case ns != nil:
			return ns.stats(1, d.TotalIOs)
		case us != nil:
			return us.stats(1000, d.TotalIOs)
		}
		return LatStats{}
	}
	d.SlatNs, d.ClatNs, d.LatNs = pick(r.SlatNs, r.Slat), pick(r.ClatNs, r.Clat), pick(r.LatNs, r.Lat)
	for _, l := range []struct {
		name string
		s    LatStats
	}{{"slat_ns", d.SlatNs}, {"clat_ns", d.ClatNs}, {"lat_ns", d.LatNs}} {
		if l.s.N > 0 {
			for _, f := range l.s.nan {
				unknown(l.name + "." + f)
			}
		}
	}
	return nil
}

// UnmarshalJSON reads a latency object in ns (the sync section's).
func (l *LatStats) UnmarshalJSON(b []byte) error {
	var r rawLat
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	*l = r.stats(1, 0)
	return nil
}

// stats converts to ns (scale 1000 for µs objects). Without N (fio
// before 3.18), a latency that was measured counts ios samples: every
// completed IO is one.
func (r *rawLat) stats(scale float64, ios int64) LatStats {
	l := LatStats{Min: r.Min.v * scale, Max: r.Max.v * scale, Mean: r.Mean.v * scale, Stddev: r.Stddev * scale}
	switch {
	case r.N != nil:
		l.N = *r.N
	case (r.Mean.v > 0 || r.Max.v > 0) && ios > 0:
		l.N = uint64(ios)
	}
	// fio's nan for a latency of no samples is its 0/0; with samples
	// (checkFigures asks, once the count is known) it is a figure lost.
	for _, f := range []struct {
		k string
		n jnum
	}{{"min", r.Min}, {"max", r.Max}, {"mean", r.Mean}} {
		if f.n.null {
			l.nan = append(l.nan, f.k)
		}
	}
	for k, v := range r.Percentile {
		if k == "0.00" || !v.known() {
			continue // filler fio wrote when percentiles were off; a nan is unknown
		}
		if l.Percentile == nil {
			l.Percentile = map[string]float64{}
		}
		l.Percentile[k] = v.v * scale
	}
	l.Bins = binsNs(r.Bins, scale)
	return l
}

// binsNs rewrites json+ bins keyed by latency in ns. fio 2.2.12 to 2.19
// keyed them by bucket index on a µs grid whose constants it wrote beside
// them; 2.20 and 2.21 by the bucket's µs value.
func binsNs(bins map[string]uint64, scale float64) map[string]uint64 {
	if len(bins) == 0 {
		return nil
	}
	_, byIndex := bins["FIO_IO_U_PLAT_NR"]
	bitsN, val := uint64(6), uint64(64)
	if v, ok := bins["FIO_IO_U_PLAT_BITS"]; ok && v > 0 && v < 16 {
		bitsN = v
	}
	if v, ok := bins["FIO_IO_U_PLAT_VAL"]; ok && v > 0 && v < 1<<16 {
		val = v
	}
	out := make(map[string]uint64, len(bins))
	for k, c := range bins {
		if len(k) > 0 && k[0] == 'F' { // the FIO_IO_U_PLAT_* constants
			continue
		}
		v, err := strconv.ParseFloat(k, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			out[k] += c // left for the histogram reader to refuse
			continue
		}
		if byIndex {
			v = platIdxToVal(uint64(v), bitsN, val)
		}
		key := strconv.FormatUint(uint64(math.Min(v*scale, math.MaxUint64)), 10)
		out[key] += c
	}
	return out
}

// platIdxToVal is fio's bucket index to value on a grid of the given
// constants (stat.c's plat_idx_to_val): the bucket's midpoint.
func platIdxToVal(idx, bits, val uint64) float64 {
	if idx < val<<1 {
		return float64(idx)
	}
	eb := (idx >> bits) - 1
	if eb > 60 {
		eb = 60
	}
	base := math.Ldexp(1, int(eb+bits))
	k := idx % val
	return base + (float64(k)+0.5)*math.Ldexp(1, int(eb))
}

var versionRe = regexp.MustCompile(`fio-(\d+)\.(\d+)`)

// fioVersion returns the major and minor version of a "fio version"
// string ("fio-3.26-19-ge7e53"), 0, 0 when it has none.
func fioVersion(s string) (major, minor int) {
	m := versionRe.FindStringSubmatch(s)
	if m == nil {
		return 0, 0
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor
}

// normalize applies what a job's entry alone cannot tell: the global
// options under every job's, the unit of latency_target, and the sync
// count fio left out.
func (o *Output) normalize() {
	targetScale, windowScale := latencyUnits(o.FioVersion)
	globals := o.globalOptions()
	fix := func(j *Job) {
		g := globals[hostKey{j.Hostname, j.Port}]
		if g == nil {
			g = globals[hostKey{}]
		}
		if len(g) > 0 {
			m := make(map[string]string, len(g)+len(j.JobOptions))
			for k, v := range g {
				m[k] = v
			}
			for k, v := range j.JobOptions {
				m[k] = v
			}
			j.JobOptions = m
		}
		j.LatencyTarget *= targetScale
		j.LatencyWindow *= windowScale
		s := &j.Sync.LatNs
		if s.N == 0 && (s.Mean > 0 || s.Max > 0) {
			// No N before 3.18: the count is total_ios, which fdatasync
			// leaves at 0 and puts in read.short_ios (fio's bug up to 3.42).
			s.N = uint64(max(j.Sync.TotalIOs, 0))
			if s.N == 0 {
				s.N = uint64(max(j.Read.ShortIOs, 0))
			}
		}
	}
	for i := range o.Jobs {
		fix(&o.Jobs[i])
	}
	for i := range o.ClientStats {
		fix(&o.ClientStats[i])
	}
}

// latencyUnits are the factors that bring a version's latency_target to
// ns and its latency_window to µs. fio kept both in µs until 3.3, which
// turned them into ns as the options were read; 3.21 put the window back
// in µs. A version fio did not name is taken as today's.
func latencyUnits(version string) (target, window float64) {
	major, minor := fioVersion(version)
	switch {
	case major == 0:
		return 1, 1
	case major < 3 || major == 3 && minor < 3:
		return 1000, 1
	case major == 3 && minor < 21:
		return 1, 1.0 / 1000
	}
	return 1, 1
}

type hostKey struct {
	host string
	port int
}

// globalOptions reads "global options": one object, or (client mode,
// 3.39+) an array of objects each naming its server. The key of a lone
// object is the zero hostKey.
func (o *Output) globalOptions() map[hostKey]map[string]string {
	if len(o.GlobalOptions) == 0 {
		return nil
	}
	var one map[string]any
	if json.Unmarshal(o.GlobalOptions, &one) == nil {
		return map[hostKey]map[string]string{{}: stringsOf(one)}
	}
	var many []map[string]any
	if json.Unmarshal(o.GlobalOptions, &many) != nil {
		return nil
	}
	out := map[hostKey]map[string]string{}
	for i, m := range many {
		s := stringsOf(m)
		host := s["hostname"]
		port, _ := strconv.Atoi(s["port"])
		delete(s, "hostname")
		delete(s, "port")
		out[hostKey{host, port}] = s
		if i == 0 {
			out[hostKey{}] = s
		}
	}
	return out
}

// stringsOf keeps the values of an options object as fio's strings.
func stringsOf(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case string:
			out[k] = x
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(x)
		case nil:
			out[k] = ""
		}
	}
	return out
}
