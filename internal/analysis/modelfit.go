package analysis

import "math"

// ModelIOPS is the disk model's rate at depth q for a curve whose fit
// has the latency serviceLatNs with no queueing, the ceiling (IOPS; 0
// for a curve that does not bend) and the knee's sharpness: what the
// reports draw as the fit.
func ModelIOPS(q, serviceLatNs, ceiling, sharpness float64) float64 {
	if q <= 0 || serviceLatNs <= 0 {
		return 0
	}
	return fitIOPS(q, serviceLatNs/1e9, ceiling, math.Max(sharpness, 1))
}
