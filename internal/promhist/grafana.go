package promhist

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"

	"github.com/iolens/iolens/internal/hint"
)

// Annotation is one Grafana annotation (the body of POST /api/annotations):
// a region from Time to TimeEnd, in milliseconds since the epoch, with
// tags a dashboard's annotation query can select.
type Annotation struct {
	DashboardUID string   `json:"dashboardUID,omitempty"`
	Time         int64    `json:"time"`
	TimeEnd      int64    `json:"timeEnd"`
	Tags         []string `json:"tags"`
	Text         string   `json:"text"`
}

// Annotations are the findings, ceilings and gaps of a as Grafana
// annotations, tagged iolens, the kind, the instance and the device.
func Annotations(a *Analysis, loc *time.Location, dashboardUID string) []Annotation {
	c := NewClock(a, loc)
	out := []Annotation{}
	add := func(from, to time.Time, text string, tags ...string) {
		ts := []string{"iolens"}
		for _, t := range tags {
			if t != "" {
				ts = append(ts, t)
			}
		}
		out = append(out, Annotation{DashboardUID: dashboardUID, Time: from.UnixMilli(), TimeEnd: to.UnixMilli(), Tags: ts, Text: text})
	}
	for _, n := range a.Nodes {
		for _, f := range n.Findings {
			switch f.Kind {
			case "device", "expect", "discovery":
				continue
			}
			add(f.Start, f.End, c.Describe(f), f.Kind, f.Severity, n.Instance, f.Device)
		}
		for _, cl := range n.Ceilings {
			text := c.DescribeCeiling(cl)
			for _, e := range cl.Episodes {
				add(e.Start, e.End, text, "ceiling", cl.Dir, n.Instance, cl.Device)
			}
		}
		for _, g := range n.Gaps {
			add(g.From, g.To, "no samples: nothing can be said of this stretch", "gap", n.Instance)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// WriteAnnotations writes annotations as one JSON array.
func WriteAnnotations(w io.Writer, as []Annotation) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(as)
}

// Grafana posts annotations to a Grafana's HTTP API.
type Grafana struct {
	base   string
	client *http.Client
}

// NewGrafana connects to the Grafana at rawURL with a service account
// token read from tokenFile (and TLS as a says).
func NewGrafana(rawURL string, a Auth) (*Grafana, error) {
	base, err := ParseBase(rawURL, "Grafana")
	if err != nil {
		return nil, err
	}
	if a.TokenFile == "" {
		return nil, &ConfigError{Err: fmt.Errorf("posting to Grafana needs a token"), Help: "give --grafana-token-file FILE, a service account token with the annotations:write permission"}
	}
	hc, err := HTTPClient(base, a, 1<<20, 30*time.Second)
	if err != nil {
		return nil, err
	}
	return &Grafana{base: base.String(), client: hc}, nil
}

// GrafanaError is an annotation Grafana did not take.
type GrafanaError struct {
	Status int
	Body   string
	Posted int
}

func (e *GrafanaError) Error() string {
	return fmt.Sprintf("Grafana answered %d to an annotation (%d posted before it): %s", e.Status, e.Posted, e.Body)
}

// Hint says what to check.
func (e *GrafanaError) Hint() string {
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "the token needs the annotations:write permission (a service account with the Editor role has it)"
	}
	return "check the Grafana URL; --annotations-out FILE keeps the annotations to import by hand"
}

// Post sends each annotation, in order, and returns how many Grafana took.
func (g *Grafana) Post(ctx context.Context, as []Annotation) (int, error) {
	for i, a := range as {
		body, err := json.Marshal(a)
		if err != nil {
			return i, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.base+"/api/annotations", bytes.NewReader(body))
		if err != nil {
			return i, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := g.client.Do(req)
		if err != nil {
			return i, hint.Wrap(fmt.Errorf("posting to Grafana at %s: %w", g.base, err), "check the URL and that Grafana answers there")
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return i, &GrafanaError{Status: resp.StatusCode, Body: string(bytes.TrimSpace(msg)), Posted: i}
		}
	}
	return len(as), nil
}
