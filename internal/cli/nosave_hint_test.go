package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/hint"
)

// A history that cannot be opened says how to run without one, after
// what the store itself advises.
func TestRunSaveStartAdvisesNoSave(t *testing.T) {
	db := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(db, []byte("not a database, and no SQLite header either: just text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &runSaveOptions{db: db}
	var out, errOut bytes.Buffer
	k, err := o.start(context.Background(), IOStreams{Out: &out, ErrOut: &errOut}, "r1", "quick", nil)
	if err == nil {
		k.Close()
		t.Fatal("a file that is not a database opened as the history")
	}
	h := hint.Of(err)
	if !strings.HasSuffix(h, ", or run with --no-save") || h == ", or run with --no-save" {
		t.Errorf("hint %q: want the store's advice, then --no-save", h)
	}
}
