package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPerformanceDocFlags checks the barberbench commands in
// docs/performance.md's shell blocks: every flag they pass to seed, run or
// receive is one that subcommand defines, so a renamed or removed flag
// fails here rather than in a reader's shell.
func TestPerformanceDocFlags(t *testing.T) {
	doc, err := os.ReadFile("../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]map[string]bool{}
	for _, sub := range []string{"seed", "run", "receive"} {
		var help bytes.Buffer
		if code := cli(context.Background(), []string{sub, "-h"}, &help, &help); code != 0 {
			t.Fatalf("%s -h: exit %d: %s", sub, code, help.String())
		}
		defined[sub] = map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z0-9-]+)`).FindAllStringSubmatch(help.String(), -1) {
			defined[sub][m[1]] = true
		}
		if len(defined[sub]) == 0 {
			t.Fatalf("%s -h listed no flags: %s", sub, help.String())
		}
	}
	// run() { /tmp/barberbench run …; } makes "run …" the run subcommand.
	command := regexp.MustCompile(`(?:barberbench (seed|run|receive)\b|^(run) )(.*)`)
	flagRE := regexp.MustCompile(`(?:^|\s)--([a-z0-9-]+)`)
	checked := 0
	for i, block := range strings.Split(string(doc), "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
			m := command.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			sub := m[1] + m[2]
			args, _, _ := strings.Cut(m[3], "#") // a comment
			args, _, _ = strings.Cut(args, ";")  // the next command
			for _, f := range flagRE.FindAllStringSubmatch(args, -1) {
				checked++
				if !defined[sub][f[1]] {
					t.Errorf("shell block %d: barberbench %s has no flag --%s: %s", i+1, sub, f[1], strings.TrimSpace(line))
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d flags in docs/performance.md's shell blocks; the blocks were not found", checked)
	}
}
