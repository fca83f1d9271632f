package k8s

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The volumes of one group (--volumes-per-node N) must be measured at the
// same time, or the run shows nothing about how the node splits its
// bandwidth: provisioning and attach times differ by seconds to minutes.
// Each agent of such a group prepares its test file, says it is ready and
// waits; once every live target of the group is ready, the CLI sets the
// pod annotation AnnotationStart to a start time a little ahead, which the
// kubelet writes into the pod's downward API volume (within about a second
// here), and every agent starts its first test at that time. It needs
// 'patch' on pods and nothing more: no exec, no service account token in
// the pod.
const (
	AnnotationStart = "iolens.dev/start"
	gateDir         = "/gate"
	gateFile        = "start"
	// gateLead is how far ahead the start time is set, so that every pod
	// sees it before it passes.
	gateLead = 2 * time.Second
)

// GatePath is the file in the pod that holds the start time.
const GatePath = gateDir + "/" + gateFile

// gated reports whether a target waits for the rest of its group.
func gated(t Target) bool { return t.Slot > 0 }

// gate is the start barrier of one group.
type gate struct {
	mu     sync.Mutex
	total  int
	ready  map[string]*target // by target id
	gone   map[string]bool    // targets that ended before they were ready
	opened bool
}

func newGates(groups [][]Target) map[string]*gate {
	gs := map[string]*gate{}
	for _, g := range groups {
		if len(g) > 1 && gated(g[0]) {
			gs[g[0].Group] = &gate{total: len(g), ready: map[string]*target{}, gone: map[string]bool{}}
		}
	}
	return gs
}

// isReady marks a target ready and returns the pods to start when the
// whole group is.
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
	return sts, 0
}

// gateReady is called when a target's agent says it is ready.
func (st *target) gateReady(ctx context.Context) {
	g := st.r.gates[st.t.Group]
	if g == nil || st.pod == nil {
		return
	}
	pods, waiting := g.isReady(st)
	if pods == nil {
		st.r.event(Event{Target: st.t, Phase: PhaseInfo, Message: fmt.Sprintf("ready; waiting for %d more volume(s) of the group", waiting)})
		return
	}
	st.r.openGate(ctx, pods)
}

// gateLeft is called when a target ends, so that the rest of its group
// does not wait for it.
func (r *Runner) gateLeft(ctx context.Context, t Target) {
	g := r.gates[t.Group]
	if g == nil {
		return
	}
	if pods, _ := g.left(t.ID); pods != nil {
		r.openGate(ctx, pods)
	}
}

// openGate sets the start time on every ready pod of a group.
func (r *Runner) openGate(ctx context.Context, sts []*target) {
	start := r.Client.now().Add(gateLead).UTC().Format(time.RFC3339Nano)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{AnnotationStart: start}}})
	for _, st := range sts {
		_, err := r.Client.CS.CoreV1().Pods(r.Config.Namespace).Patch(ctx, st.pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			// The agent starts alone when its wait times out; say why.
			r.event(Event{Target: st.t, Phase: PhaseInfo, Message: fmt.Sprintf("could not start pod %s with its group (needs 'patch' on pods, see deploy/rbac.yaml): %v", st.pod.Name, err)})
			continue
		}
		r.event(Event{Target: st.t, Phase: PhaseInfo, Message: "group complete: starting together at " + start})
	}
}
