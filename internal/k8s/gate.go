package k8s

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Targets that share a node (--volumes-per-node N), or every target of a
// --parallel run, must be measured at the same time, or the run shows
// nothing about how a node or a storage back end splits its bandwidth:
// provisioning and attach times differ by seconds to minutes. Each agent
// of such a gate prepares its test file, says it is ready and waits; once
// every live target of the gate is ready, the CLI writes a start time a
// little ahead into a ConfigMap the run owns, and every agent, which polls
// that ConfigMap, starts its first test at that time.
//
// The CLI needs create, patch and delete on ConfigMaps, not patch on pods
// (which could change the image of any pod in the namespace). The agent
// reads the ConfigMap with the token of a service account allowed to get
// ConfigMaps and nothing else; agents that wait for no gate get no token.
// A ConfigMap mounted as a volume would need no token, but the kubelet
// refreshes such volumes only on its periodic sync (a minute or more).
const (
	// gateLead is how far ahead the start time is set, so that every
	// agent reads it before it passes.
	gateLead = 2 * time.Second
	// GatePoll is how often an agent reads the gate ConfigMap.
	GatePoll = 200 * time.Millisecond
	// gateRunKey is the key of the gate of a whole --parallel run.
	gateRunKey = "run"
)

// gateRef says where a gated target's agent reads its start time: a key
// of the run's gate ConfigMap. Zero for a target that waits for nobody.
type gateRef struct {
	ConfigMap string
	Key       string
}

// gate is the start barrier of one set of targets.
type gate struct {
	key    string
	mu     sync.Mutex
	total  int
	ready  map[string]*target // by target id
	gone   map[string]bool    // targets that ended before they were ready
	opened bool
	// started is when each target's agent began its first test, by its
	// own clock.
	started map[string]time.Time
}

// planGates assigns targets to gates: with Parallel every target of the
// run waits for all others; otherwise the targets of a group (the volumes
// of one node) wait for each other. A target alone waits for nobody.
func planGates(targets []Target, parallel bool) map[string]*gate {
	gs := map[string]*gate{}
	add := func(key string, ts []Target) {
		if len(ts) < 2 {
			return
		}
		g := &gate{key: key, total: len(ts), ready: map[string]*target{}, gone: map[string]bool{}, started: map[string]time.Time{}}
		for _, t := range ts {
			gs[t.ID] = g
		}
	}
	if parallel {
		add(gateRunKey, targets)
		return gs
	}
	for _, grp := range Groups(targets) {
		add(grp[0].Group, grp)
	}
	return gs
}

// isReady marks a target ready and returns the targets to start when the
// whole gate is.
func (g *gate) isReady(st *target) ([]*target, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ready[st.t.ID] = st
	return g.check()
}

// left marks a target that ended; only one that never became ready
// changes anything.
func (g *gate) left(id string) ([]*target, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.ready[id]; !ok {
		g.gone[id] = true
	}
	return g.check()
}

func (g *gate) check() ([]*target, int) {
	waiting := g.total - len(g.ready) - len(g.gone)
	if g.opened || waiting > 0 || len(g.ready) == 0 {
		return nil, waiting
	}
	g.opened = true
	var sts []*target
	for _, st := range g.ready {
		sts = append(sts, st)
	}
	sort.Slice(sts, func(i, j int) bool { return sts[i].t.ID < sts[j].t.ID })
	return sts, 0
}

func (g *gate) start(id string, at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.started[id]; !ok && !at.IsZero() {
		g.started[id] = at
	}
}

// GateSkew is how far apart the targets of one gate began their first
// test, by the agents' clocks (on different nodes, their clock offset is
// part of it).
type GateSkew struct {
	Key     string
	Targets int
	Skew    time.Duration
}

func (g *gate) skew() (GateSkew, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.started) < 2 {
		return GateSkew{}, false
	}
	var lo, hi time.Time
	for _, t := range g.started {
		if lo.IsZero() || t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	return GateSkew{Key: g.key, Targets: len(g.started), Skew: hi.Sub(lo)}, true
}

// setupGates makes the run's gate ConfigMap when some target waits for
// others. Without the agents' service account, or without the right to
// create the ConfigMap, targets start as each is ready, and the run says
// so. The returned cleanup deletes the ConfigMap.
func (r *Runner) setupGates(ctx context.Context, targets []Target) func(context.Context) error {
	r.gates = planGates(targets, r.Config.Parallel)
	if len(r.gates) == 0 {
		return nil
	}
	cs := r.Client.CS
	ns := r.Config.Namespace
	off := func(msg string) {
		r.gates = nil
		r.event(Event{Target: targets[0], Phase: PhaseInfo, Message: msg + ": every volume starts as soon as it is ready, not together"})
	}
	sa := r.Config.agentServiceAccount()
	_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, sa, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		off(fmt.Sprintf("no service account %s in namespace %s for the start gate (kubectl apply -f deploy/rbac.yaml, or --agent-service-account)", sa, ns))
		return nil
	case err != nil && !apierrors.IsForbidden(err):
		off(fmt.Sprintf("reading service account %s: %v", sa, err))
		return nil
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "iolens-gate-", Namespace: ns, Labels: map[string]string{
			LabelManagedBy: ManagedByValue, LabelRunID: r.Config.RunID, LabelRole: "gate"}},
	}, metav1.CreateOptions{})
	if err != nil {
		off(fmt.Sprintf("cannot create the start-gate ConfigMap (needs create on configmaps, see deploy/rbac.yaml): %v", err))
		return nil
	}
	r.gateCM = cm.Name
	return func(ctx context.Context) error {
		err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting ConfigMap %s: %w", cm.Name, err)
		}
		return nil
	}
}

// gateFor is where a target's agent reads its start time.
func (r *Runner) gateFor(t Target) gateRef {
	g := r.gates[t.ID]
	if g == nil || r.gateCM == "" {
		return gateRef{}
	}
	return gateRef{ConfigMap: r.gateCM, Key: g.key}
}

// gateReady is called when a target's agent says it is ready.
func (st *target) gateReady(ctx context.Context) {
	g := st.r.gates[st.t.ID]
	if g == nil || st.r.gateCM == "" {
		return
	}
	sts, waiting := g.isReady(st)
	if sts == nil {
		of := "of the group"
		if g.key == gateRunKey {
			of = "of the run"
		}
		st.r.event(Event{Target: st.t, Phase: PhaseInfo, Message: fmt.Sprintf("ready; waiting for %d more volume(s) %s", waiting, of)})
		return
	}
	st.r.openGate(ctx, g, sts)
}

// gateLeft is called when a target ends, so that the rest of its gate
// does not wait for it.
func (r *Runner) gateLeft(ctx context.Context, t Target) {
	g := r.gates[t.ID]
	if g == nil || r.gateCM == "" {
		return
	}
	if sts, _ := g.left(t.ID); sts != nil {
		r.openGate(ctx, g, sts)
	}
}

// openGate writes the gate's start time into the run's ConfigMap.
func (r *Runner) openGate(ctx context.Context, g *gate, sts []*target) {
	start := r.Client.now().Add(gateLead).UTC().Format(time.RFC3339Nano)
	patch, _ := json.Marshal(map[string]any{"data": map[string]string{g.key: start}})
	_, err := r.Client.CS.CoreV1().ConfigMaps(r.Config.Namespace).Patch(ctx, r.gateCM, types.MergePatchType, patch, metav1.PatchOptions{})
	for _, st := range sts {
		if err != nil {
			// The agents start alone when their wait times out; say why.
			r.event(Event{Target: st.t, Phase: PhaseInfo, Message: fmt.Sprintf("could not open the start gate (needs patch on configmaps, see deploy/rbac.yaml): %v", err)})
			continue
		}
		r.event(Event{Target: st.t, Phase: PhaseInfo, Message: "group complete: starting together at " + start})
	}
}

// GateReader returns a gate's start time, "" while it is not set.
type GateReader func(ctx context.Context) (string, error)

// ConfigMapGate reads key of the ConfigMap name in ns.
func ConfigMapGate(cs kubernetes.Interface, ns, name, key string) GateReader {
	return func(ctx context.Context) (string, error) {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return cm.Data[key], nil
	}
}

// WaitGate waits until read returns a start time, then until that time.
// It gives up after timeout and starts alone. report, if set, receives
// what is worth saying: the first error reading the gate, a start time
// that cannot be read, or giving up.
func WaitGate(ctx context.Context, read GateReader, timeout, poll time.Duration, report func(string)) {
	if report == nil {
		report = func(string) {}
	}
	end := time.Now().Add(timeout)
	var lastErr string
	for {
		s, err := read(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			// Say it once, not every poll: an agent that cannot read the
			// gate still starts when the timeout ends.
			if msg := err.Error(); msg != lastErr {
				lastErr = msg
				report(fmt.Sprintf("cannot read the start gate (%v); still trying, starting alone after %s", err, timeout))
			}
		case s != "":
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				report(fmt.Sprintf("start time %q unreadable (%v): starting now", s, err))
				return
			}
			// A node clock far off must not hold the test for long.
			if d := time.Until(at); d > 0 && d < 30*time.Second {
				select {
				case <-ctx.Done():
				case <-time.After(d):
				}
			}
			return
		}
		if time.Now().After(end) {
			report(fmt.Sprintf("the rest of the group did not come within %s: starting alone", timeout))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}
