package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemdUnit checks deploy/barberd.service: systemd-analyze verify
// accepts it (where systemd is installed), and every barberd command it runs
// is one barberd has, with its flags, answering --help.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	unit, err := os.ReadFile("../../deploy/barberd.service")
	if err != nil {
		t.Fatal(err)
	}
	const installed = "/usr/local/bin/barberd"
	var commands int
	sc := bufio.NewScanner(strings.NewReader(string(unit)))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || !strings.HasPrefix(k, "ExecStart") {
			continue
		}
		args := strings.Fields(v)
		if args[0] != installed {
			t.Fatalf("%s runs %s, not %s", k, args[0], installed)
		}
		commands++
		if _, stderr, code := runCLI(t, "", append(args[1:], "--help")...); code != 0 {
			t.Errorf("%s: barberd %s --help: exit %d\n%s", k, strings.Join(args[1:], " "), code, stderr)
		}
	}
	if commands != 2 {
		t.Errorf("the unit runs %d barberd commands, want migrate and serve", commands)
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed: the unit's syntax is not verified")
	}
	path := filepath.Join(t.TempDir(), "barberd.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), installed, barberd(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
