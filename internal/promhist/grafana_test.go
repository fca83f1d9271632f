package promhist

import (
	"encoding/json"
	"errors"
	"github.com/iolens/iolens/internal/promhist/promtest"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
)

// TestAnnotations: every finding, ceiling span and gap of the scenario
// becomes a region annotation with its times and tags; Grafana gets them
// with the token, and a refusal says what the token needs.
func TestAnnotations(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	sc := promtest.DefaultScenario
	s := sc.Synth(start, 600)
	a, _, err := analyzeFake(t, s.Build(), Options{From: start, To: start.Add(599 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	as := Annotations(a, time.UTC, "dash-1")
	var stall *Annotation
	kinds := map[string]int{}
	for i, x := range as {
		kinds[x.Tags[1]]++
		if x.Tags[1] == "stall" {
			stall = &as[i]
		}
		if x.DashboardUID != "dash-1" || x.Tags[0] != "iolens" || x.TimeEnd < x.Time {
			t.Errorf("annotation %+v", x)
		}
	}
	if kinds["stall"] != 1 || kinds["ceiling"] != 1 || kinds["gap"] != 1 || kinds["cliff"] != 1 || kinds["saturation"] != 1 {
		t.Errorf("annotations by kind %v", kinds)
	}
	if stall == nil || stall.Time != s.At(sc.StallFrom).UnixMilli() || stall.TimeEnd != s.At(sc.StallTo).UnixMilli() ||
		!strings.Contains(stall.Text, "stalled 14:01:40–14:01:55 (15 s)") || !strings.Contains(strings.Join(stall.Tags, ","), "node-1:9100,sdb") {
		t.Errorf("the stall: %+v", stall)
	}
	var buf strings.Builder
	if err := WriteAnnotations(&buf, as); err != nil {
		t.Fatal(err)
	}
	var back []Annotation
	if err := json.Unmarshal([]byte(buf.String()), &back); err != nil || len(back) != len(as) {
		t.Fatalf("the file reads back as %d annotations: %v", len(back), err)
	}

	var got []Annotation
	var auth string
	refuse := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/grafana/api/annotations" {
			http.NotFound(w, r)
			return
		}
		if refuse {
			http.Error(w, `{"message":"You'll need additional permissions"}`, http.StatusForbidden)
			return
		}
		auth = r.Header.Get("Authorization")
		var x Annotation
		if err := json.NewDecoder(r.Body).Decode(&x); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		got = append(got, x)
		w.Write([]byte(`{"id":1,"message":"Annotation added"}`))
	}))
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("glsa_abc\n"), 0o600)
	g, err := NewGrafana(srv.URL+"/grafana/", Auth{TokenFile: tok})
	if err != nil {
		t.Fatal(err)
	}
	n, err := g.Post(t.Context(), as)
	if err != nil || n != len(as) || len(got) != len(as) || auth != "Bearer glsa_abc" {
		t.Fatalf("posted %d of %d (%d received, Authorization %q): %v", n, len(as), len(got), auth, err)
	}
	refuse = true
	_, err = g.Post(t.Context(), as)
	var ge *GrafanaError
	if !errors.As(err, &ge) || ge.Status != 403 || !strings.Contains(hint.Of(err), "annotations:write") {
		t.Errorf("a refusal: %v", err)
	}
	if _, err := NewGrafana(srv.URL, Auth{}); err == nil || hint.Of(err) == "" {
		t.Errorf("no token: %v", err)
	}
	if _, err := NewGrafana("http://grafana.example.com", Auth{TokenFile: tok}); err == nil || !strings.Contains(err.Error(), "in clear") {
		t.Errorf("a token over http to another host: %v", err)
	}
}
