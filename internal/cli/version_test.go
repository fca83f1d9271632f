package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	dir := t.TempDir()
	fakeFio := filepath.Join(dir, "fio")
	if err := os.WriteFile(fakeFio, []byte("#!/bin/sh\necho fio-9.87\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantFio string
		fioErr  bool
	}{
		{"fio found", []string{"version", "-o", "json", "--fio", fakeFio}, "fio-9.87", false},
		{"fio missing", []string{"version", "-o", "json", "--fio", filepath.Join(dir, "nofio")}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
			cmd.SetArgs(tc.args)
			if err := cmd.Execute(); err != nil {
				t.Fatalf("version: %v", err)
			}
			// Decode into a map so that the field names are checked as
			// a script reading the JSON sees them.
			var m map[string]any
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out.String())
			}
			for _, k := range []string{"version", "commit", "go", "platform", "fio"} {
				if _, ok := m[k]; !ok {
					t.Errorf("no %q in %s", k, out.String())
				}
			}
			if m["version"] != Version || m["go"] != runtime.Version() || m["platform"] != runtime.GOOS+"/"+runtime.GOARCH {
				t.Errorf("got %v", m)
			}
			if m["fio"] != tc.wantFio {
				t.Errorf("fio = %v, want %q", m["fio"], tc.wantFio)
			}
			if _, has := m["fio_error"]; has != tc.fioErr {
				t.Errorf("fio_error present = %v, want %v (%s)", has, tc.fioErr, out.String())
			}
		})
	}
}

func TestVersionText(t *testing.T) {
	var out bytes.Buffer
	cmd := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"version", "--fio", filepath.Join(t.TempDir(), "nofio")})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"iolens  " + Version + "\n", "go      " + runtime.Version(), "fio     not found ("} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}

	out.Reset()
	cmd = NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	// cmd/iolens-image reads the last word of this line.
	if got := out.String(); got != "iolens version "+Version+"\n" {
		t.Errorf("--version printed %q", got)
	}

	cmd = NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"version", "-o", "yaml"})
	var u *UsageError
	if err := cmd.Execute(); !errors.As(err, &u) {
		t.Errorf("-o yaml: got %v, want a usage error", err)
	}
}
