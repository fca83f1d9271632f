package headroom

import (
	"errors"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/hint"
)

// The mistakes a request is refused for before anything is read: each a
// usage error with what to give instead.
func TestRequestCheck(t *testing.T) {
	given := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, g := range names {
				if g == n {
					return true
				}
			}
			return false
		}
	}
	ok := Request{URL: "http://127.0.0.1:1", MarginPct: 30, RulesFormat: RulesPlain, Set: given()}
	if err := ok.Check(); err != nil {
		t.Fatalf("a good request: %v", err)
	}
	for _, tc := range []struct {
		edit func(*Request)
		want string
	}{
		{func(r *Request) { r.URL = "" }, "needs --prometheus"},
		{func(r *Request) { r.MarginPct = -5 }, "--margin"},
		{func(r *Request) { r.RulesFormat = "thanos" }, "--rules-format"},
		{func(r *Request) { r.Namespace, r.Set = "db", given("namespace") }, "--namespace needs --cluster"},
		{func(r *Request) { r.Set = given("rules-format") }, "--rules-format needs --rules"},
	} {
		r := ok
		tc.edit(&r)
		err := r.Check()
		var u *hint.UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) || hint.Of(err) == "" {
			t.Errorf("%q: %v, want a usage error with a hint", tc.want, err)
		}
	}
}
