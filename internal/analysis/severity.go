package analysis

import "github.com/iolens/iolens/internal/result"

// SeverityRank orders severities for --fail-on: none 0, info 1, warn 2,
// fail 3. Any other name ranks 0 and is not ok.
func SeverityRank(sev string) (rank int, ok bool) {
	switch sev {
	case "none":
		return 0, true
	case SevInfo:
		return 1, true
	case SevWarn:
		return 2, true
	case SevFail:
		return 3, true
	}
	return 0, false
}

// CountAtLeast counts the findings of rs at severity sev or worse, and,
// at "fail" or below, each test that failed (it measured nothing: no
// finding can be worse); none for "none".
func CountAtLeast(rs []result.Result, sev string) int {
	lim, _ := SeverityRank(sev)
	if lim == 0 {
		return 0
	}
	n := 0
	for _, r := range rs {
		if r.Status != "" && r.Status != "ok" {
			n++
		}
		for _, f := range r.Findings {
			if r, _ := SeverityRank(f.Severity); r >= lim {
				n++
			}
		}
	}
	return n
}
