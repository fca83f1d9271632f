package diagnosis

import "encoding/json"

// MarshalJSON writes the figures a direction has not measured as null,
// never as a 0 that reads as a measurement: the QD1 figures when no QD1
// test ran, the knee when none was established.
func (d Direction) MarshalJSON() ([]byte, error) {
	type plain Direction
	out := struct {
		plain
		QD1LatencyNs *float64 `json:"qd1_latency_ns"`
		QD1P99Ns     *float64 `json:"qd1_p99_ns"`
		QD1IOPS      *float64 `json:"qd1_iops"`
		KneeQD       *int     `json:"knee_qd"`
		KneeReached  *int     `json:"knee_reached_qd"`
		KneeBelow    *int     `json:"knee_below_qd"`
		KneeShare    *float64 `json:"knee_below_share"`
	}{plain: plain(d)}
	if d.KneeReachedQD > 0 {
		out.KneeReached = &d.KneeReachedQD
	}
	if d.KneeBelowQD > 0 {
		out.KneeBelow, out.KneeShare = &d.KneeBelowQD, &d.KneeBelowShare
	}
	if d.QD1LatencyNs > 0 {
		out.QD1LatencyNs, out.QD1P99Ns, out.QD1IOPS = &d.QD1LatencyNs, &d.QD1P99Ns, &d.QD1IOPS
	}
	if d.KneeQD > 0 {
		out.KneeQD = &d.KneeQD
	}
	return json.Marshal(out)
}
