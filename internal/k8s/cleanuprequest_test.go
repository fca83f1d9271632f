package k8s

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestCleanupAcrossNamespacesAsksForYes(t *testing.T) {
	meta := func(ns, name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	run := map[string]string{LabelManagedBy: ManagedByValue, LabelRunID: "r1"}
	noRun := map[string]string{LabelManagedBy: ManagedByValue}
	newCS := func() *fake.Clientset {
		return fake.NewSimpleClientset(
			&corev1.PersistentVolumeClaim{ObjectMeta: meta("team-a", "iolens-t1-1", run)},
			&corev1.ConfigMap{ObjectMeta: meta("team-b", "iolens-gate-1", run)},
			&corev1.PersistentVolumeClaim{ObjectMeta: meta("team-a", "data", noRun)},
		)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	cs := newCS()
	var out, errb bytes.Buffer
	all := CleanupRequest{All: true, AllNamespaces: true, Timeout: time.Minute}
	progress := func(s string) { errb.WriteString(s + "\n") }
	err := all.Run(ctx, &Client{CS: cs, Poll: time.Millisecond}, "default", &out, progress)
	var re *RequestError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "--yes") || !strings.Contains(err.Error(), "team-a, team-b") {
		t.Fatalf("without --yes: %v", err)
	}
	if got := out.String(); got != "team-a/iolens-t1-1\nteam-b/iolens-gate-1\n" {
		t.Errorf("listed:\n%s", got)
	}
	if acts := len(cs.Actions()); acts == 0 {
		t.Error("nothing listed")
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "delete" {
			t.Fatalf("deleted without --yes: %v", a)
		}
	}

	cs = newCS()
	out.Reset()
	yes := all
	yes.Yes = true
	if err := yes.Run(ctx, &Client{CS: cs, Poll: time.Millisecond}, "default", &out, progress); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims("team-a").Get(ctx, "data", metav1.GetOptions{}); err != nil {
		t.Errorf("a claim without a run id was deleted: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("team-b").Get(ctx, "iolens-gate-1", metav1.GetOptions{}); err == nil {
		t.Error("the run's ConfigMap is still there")
	}
	if !strings.Contains(out.String(), "nothing left") {
		t.Errorf("out: %s", out.String())
	}

	// One namespace, or one run, needs no --yes.
	cs = newCS()
	oneNS := CleanupRequest{All: true, Timeout: time.Minute}
	if err := oneNS.Run(ctx, &Client{CS: cs, Poll: time.Millisecond}, "team-a", &out, progress); err != nil {
		t.Errorf("--all in one namespace: %v", err)
	}
	oneRun := CleanupRequest{RunID: "r1", AllNamespaces: true, Timeout: time.Minute}
	if err := oneRun.Run(ctx, &Client{CS: newCS(), Poll: time.Millisecond}, "", &out, progress); err != nil {
		t.Errorf("--run across namespaces: %v", err)
	}
}

func TestCleanupRequestCheck(t *testing.T) {
	for _, c := range []struct {
		q    CleanupRequest
		want string
	}{
		{CleanupRequest{RunID: "r1", Timeout: time.Minute}, ""},
		{CleanupRequest{All: true, AllNamespaces: true, Timeout: time.Minute}, ""},
		{CleanupRequest{Timeout: time.Minute}, "give either --run ID or --all"},
		{CleanupRequest{RunID: "r1", All: true, Timeout: time.Minute}, "give either --run ID or --all"},
		{CleanupRequest{RunID: "../x", Timeout: time.Minute}, "not a run id"},
		{CleanupRequest{All: true}, "--timeout 0s: must be positive"},
	} {
		err := c.q.Check()
		var re *RequestError
		if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.q, err, c.want)
		}
	}
}
