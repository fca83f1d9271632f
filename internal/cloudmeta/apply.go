package cloudmeta

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/result"
)

// ExpectFromMetadata returns an expectation that, at the first result, asks
// the cloud metadata service which disk and VM size the result's target
// is, and from then on adds the ceiling findings for them (nothing when
// there is no cloud, or nothing the catalog knows). Asking at the first
// result means the target's devices are known, whoever resolved them.
// say is told what was found.
func ExpectFromMetadata(ctx context.Context, say func(string)) func(*result.Result) {
	var once sync.Once
	var apply func(*result.Result)
	return func(r *result.Result) {
		once.Do(func() { apply = detectExpect(ctx, r.Target, say) })
		if apply != nil {
			apply(r)
		}
	}
}

func detectExpect(ctx context.Context, t result.Target, say func(string)) func(*result.Result) {
	mctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	info, err := detect(mctx, Options{})
	if err != nil || !info.Detected() {
		return nil
	}
	x, _ := info.ExpectFor(t.Devices)
	say("cloud: " + info.Summary())
	for _, n := range x.Notes {
		say("cloud: " + n)
	}
	if x.Disk == "" {
		return nil
	}
	c := limits.MustDefault()
	ex, err := c.ParseExpectation(x.Disk, x.VM, x.Attached, x.Cache)
	if err != nil {
		say(fmt.Sprintf("cloud: %s is not in the catalog as given (%v); give --expect to compare", x.Disk, err))
		return nil
	}
	return func(r *result.Result) {
		limits.Apply(r, ex)
		r.Target.Labels[limits.LabelExpectSource] = x.From
	}
}
