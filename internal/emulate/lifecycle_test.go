package emulate

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands' one-call entry points find no disk where there is none,
// and --all over an empty state root removes nothing.
func TestLifecycleWithoutDisks(t *testing.T) {
	root := t.TempDir()
	if err := ArmIn(root, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ArmIn: %v, want ErrNotFound", err)
	}
	if _, _, err := OpenUsable(root, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("OpenUsable: %v, want ErrNotFound", err)
	}
	if removed, err := Remove(context.Background(), root, []string{"nope"}, false); len(removed) != 0 || !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove by name: %v, %v; want nothing and ErrNotFound", removed, err)
	}
	if removed, err := Remove(context.Background(), root, nil, true); len(removed) != 0 || err != nil {
		t.Errorf("Remove all of none: %v, %v", removed, err)
	}
	if st := Statuses(nil); st != nil {
		t.Errorf("Statuses(none) = %v, want nil (JSON null, as before)", st)
	}
}

// The event log's two forms: the stored NDJSON as it is, and its table.
func TestEventLogForms(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.ndjson")
	l, err := openEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.write(Event{Event: EventStart, Message: "begun"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	d := &Disk{EventLog: path}
	var raw, table bytes.Buffer
	if err := d.CopyEventLog(&raw); err != nil {
		t.Fatal(err)
	}
	stored, _ := os.ReadFile(path)
	if raw.String() != string(stored) {
		t.Errorf("CopyEventLog = %q, want the file %q", raw.String(), stored)
	}
	if err := d.WriteEventLog(&table); err != nil || !strings.Contains(table.String(), "EVENT") || !strings.Contains(table.String(), "begun") {
		t.Errorf("WriteEventLog: %v\n%s", err, table.String())
	}
	if err := (&Disk{EventLog: path + ".gone"}).CopyEventLog(&raw); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CopyEventLog of no log: %v", err)
	}
}
