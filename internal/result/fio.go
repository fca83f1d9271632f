package result

// FioInfo is what fio reported about a test beside its figures.
type FioInfo struct {
	// GroupID is fio's reporting group. Jobs is how many of fio's job
	// entries the result sums: numjobs clones without group_reporting,
	// and the same job on every host of a client/server run, all ran at
	// once and count as one test.
	GroupID int `json:"groupid"`
	Jobs    int `json:"jobs"`
	// Hosts are the servers of a client/server run, in fio's order.
	Hosts []string `json:"hosts,omitempty"`
	// CPUPct is usr+sys of the busiest job, in % of one CPU (fio's
	// usr_cpu and sys_cpu); UsrCPUPct and SysCPUPct are that job's.
	CPUPct    float64 `json:"cpu_pct"`
	UsrCPUPct float64 `json:"usr_cpu_pct"`
	SysCPUPct float64 `json:"sys_cpu_pct"`
	// SyncTotalIOsZero: fio timed syncs but reported sync.total_ios as 0
	// (its fdatasync counter, wrong up to 3.42); the count is the
	// latency samples'.
	SyncTotalIOsZero bool `json:"sync_total_ios_zero,omitempty"`
	// SteadyState is fio's own steady-state check (ss= options).
	SteadyState *FioSteadyState `json:"steadystate,omitempty"`
	// LatencyTarget is fio's latency_target search, when one ran.
	LatencyTarget *FioLatencyTarget `json:"latency_target,omitempty"`
	// Parts are the rows summed: one per job entry and, when a host ran
	// several, one per host. Empty when the result is one fio entry.
	Parts []Part `json:"parts,omitempty"`
}

// FioSteadyState is fio's steady-state block.
type FioSteadyState struct {
	// Criterion is what fio checked, as it names it ("iops_slope:0.3%"),
	// DurationS over how long.
	Criterion string  `json:"ss"`
	DurationS float64 `json:"duration_s"`
	Attained  bool    `json:"attained"`
	// Measured is the value fio compared with the limit ("0.12%").
	Measured     string  `json:"criterion"`
	MaxDeviation float64 `json:"max_deviation"`
	Slope        float64 `json:"slope"`
}

// FioLatencyTarget is fio's search for the queue depth that meets a
// latency target (latency_target, latency_window, latency_percentile).
type FioLatencyTarget struct {
	TargetNs   float64 `json:"target_ns"`
	WindowUs   float64 `json:"window_us"`
	Percentile float64 `json:"percentile"`
	// Depth is the depth fio settled at.
	Depth int `json:"depth"`
}

// Part is one fio job entry, or one host's jobs, of a result that sums
// several. Its directions carry figures without histograms.
type Part struct {
	Job  string `json:"job"`
	Host string `json:"host,omitempty"`
	// Jobs is how many job entries the row sums: 1 for a job, more for a
	// host's subtotal.
	Jobs  int        `json:"jobs"`
	Error int        `json:"error,omitempty"`
	Read  *DirResult `json:"read,omitempty"`
	Write *DirResult `json:"write,omitempty"`
	Trim  *DirResult `json:"trim,omitempty"`
	Mixed *DirResult `json:"mixed,omitempty"`
	Sync  *DirResult `json:"sync,omitempty"`
}

// Dir returns the named direction of the part, nil when it has none.
func (p *Part) Dir(name string) *DirResult {
	switch name {
	case "read":
		return p.Read
	case "write":
		return p.Write
	case "trim":
		return p.Trim
	case "mixed":
		return p.Mixed
	case "sync":
		return p.Sync
	}
	return nil
}
