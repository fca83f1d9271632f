package k8s

import (
	"errors"
	"fmt"
	"strings"
)

// ErrPhaseTimeout is wrapped when a phase of a target took too long.
var ErrPhaseTimeout = errors.New("timed out")

// ErrStreamCut is wrapped when the log stream kept breaking.
var ErrStreamCut = errors.New("log stream cut")

// TargetError says which target failed, in which phase, why (from events
// and conditions) and what to do about it.
type TargetError struct {
	Target Target
	// Phase is the step that failed: "create PVC", "create Job", "bind",
	// "schedule", "start", "run".
	Phase string
	Err   error
	// Cause is what the cluster said (events, conditions), if anything.
	Cause string
	// Logs are the agent's last lines that were not records.
	Logs []string
	// NodeLost names the node when the target failed because it went
	// away or stopped being ready.
	NodeLost string
	hint     string
}

func (e *TargetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s]: %s: %v", e.Target.Name(), e.Target.ID, e.Phase, e.Err)
	if e.Cause != "" && !strings.Contains(e.Err.Error(), e.Cause) {
		b.WriteString(": " + e.Cause)
	}
	return b.String()
}

func (e *TargetError) Unwrap() error { return e.Err }

// Hint says what to do next.
func (e *TargetError) Hint() string { return e.hint }

// ClassNotFoundError means a storage class given on the command line does
// not exist; nothing was created.
type ClassNotFoundError struct {
	Name      string
	Available []string
}

func (e *ClassNotFoundError) Error() string {
	return fmt.Sprintf("storage class %q does not exist (nothing was created)", e.Name)
}

// Hint lists the classes there are.
func (e *ClassNotFoundError) Hint() string {
	if len(e.Available) == 0 {
		return "the cluster has no storage classes; install a provisioner or CSI driver first"
	}
	return "the cluster's storage classes are: " + strings.Join(e.Available, ", ") + " (see 'iolens k8s classes')"
}

// CleanupError means some objects could not be deleted or did not go away
// in time.
type CleanupError struct {
	Target    Target
	Namespace string
	RunID     string
	Err       error
}

func (e *CleanupError) Error() string {
	return fmt.Sprintf("%s [%s]: cleanup: %v", e.Target.Name(), e.Target.ID, e.Err)
}

func (e *CleanupError) Unwrap() error { return e.Err }

// Hint says how to finish the job.
func (e *CleanupError) Hint() string {
	return fmt.Sprintf("retry with: iolens k8s cleanup -n %s --run %s", e.Namespace, e.RunID)
}

func joinCause(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || strings.Contains(a, b):
		return a
	}
	return a + "; " + b
}
