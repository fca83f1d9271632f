package analysis

import "math"

// ModelIOPS is the disk model's rate at depth q for a curve of base
// latency baseLatNs, fitted ceiling (IOPS; 0 for a curve that does not
// bend) and knee sharpness: what the reports draw as the fit.
func ModelIOPS(q, baseLatNs, ceiling, sharpness float64) float64 {
	if q <= 0 || baseLatNs <= 0 {
		return 0
	}
	return fitIOPS(q, baseLatNs/1e9, ceiling, math.Max(sharpness, 1))
}
