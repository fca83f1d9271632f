package promhist

import (
	"testing"
	"time"

	"github.com/iolens/iolens/internal/promhist/promtest"
)

// analyzeFake runs Analyze against a fake serving ss.
func analyzeFake(t testing.TB, ss []*promtest.Series, o Options) (*Analysis, *promtest.Fake, error) {
	t.Helper()
	f, srv := promtest.NewFake(t, ss)
	c, err := NewClient(srv.URL, Auth{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(t.Context(), c, o)
	return a, f, err
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
