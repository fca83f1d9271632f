package store

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// FuzzParseSelector: a selector comes from the command line or a script.
// Whatever ParseSelector accepts must print back to the same selector and
// run as SQL against a real database without error; whatever it refuses,
// it refuses with an error, never a panic.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{
		"storage-class=managed-premium",
		"a==b",
		" a = b , c!=d ,e,!f",
		"suite=quick,host!=node-1,device=vdb,target=/mnt/data,run=20240501",
		"a=",
		"",
		",",
		"=b",
		"a=b=c",
		"!",
		"suite",
		"!run",
		"a=' OR 1=1 --",
		"key=\x00value",
		"k\xff=v\xfe",
		"zone!=b,!emulated,cluster",
		"a!=",
		"a=b,,c",
	} {
		f.Add(s)
	}
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(f.TempDir(), "h.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Save(ctx, []result.Result{
		mkResult("20240501-120000-aaaaaa", 1, map[string]string{"storage-class": "managed-premium", "zone": "b"}, 100),
		mkResult("20240502-120000-bbbbbb", 1, map[string]string{"a": "' OR 1=1 --", "k\xff": "v\xfe"}, 200),
	}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sel, err := ParseSelector(in)
		if err != nil {
			if sel != nil {
				t.Fatalf("%q: a selector with an error", in)
			}
			return
		}
		if len(sel) == 0 {
			t.Fatalf("%q: accepted as an empty selector, which would select everything", in)
		}
		again, err := ParseSelector(sel.String())
		if err != nil || !reflect.DeepEqual(again, sel) {
			t.Fatalf("%q: printed as %q, read back as %v (%v)", in, sel.String(), again, err)
		}
		if _, err := s.Select(ctx, sel); err != nil {
			t.Fatalf("%q: select: %v", in, err)
		}
		if _, err := s.List(ctx, ListOptions{Selector: sel}); err != nil {
			t.Fatalf("%q: list: %v", in, err)
		}
	})
}
