package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"barberd/graph/storetest"
)

// walkMark is the line before each fenced sh block of the README that
// TestReadmeWalk runs.
const walkMark = "<!-- walk -->"

// walkBase is the server address the README's walks use; the test points it
// at its own server.
const walkBase = "http://localhost:8080"

// walkPrelude makes the pasted walk strict: any failing command or request
// fails it. "go run ./cmd/barberd" runs the binary the test built, against
// the demo server's database (DATABASE_URL); every other go command is
// refused. curl fails on an HTTP error and shows the answer on stderr.
const walkPrelude = `set -euxo pipefail
go() {
  if [ "$#" -ge 2 ] && [ "$1" = run ] && [ "$2" = ./cmd/barberd ]; then
    "$WALK_BARBERD" "${@:3}"
    return
  fi
  echo "the walk may run only go run ./cmd/barberd, not go $*" >&2
  return 1
}
barberd() { "$WALK_BARBERD" "$@"; }
WALK_FAIL=--fail-with-body
command curl --fail-with-body --version >/dev/null 2>&1 || WALK_FAIL=--fail
curl() {
  local out
  if ! out=$(command curl -sS "$WALK_FAIL" "$@"); then
    printf '%s\n' "$out" >&2
    return 22
  fi
  printf '%s\n' "$out"
}
`

// walkEpilogue hands the test what the walk made, for it to check.
const walkEpilogue = `
printf 'walk-result %s %s %s %s %s %s\n' "$KEY" "$ADMIN" "$APT" "$SHOP" "$DAY" "$UNIT"
`

// walkSteps are what the walks must show a newcomer; dropping one from the
// README fails the test.
var walkSteps = []string{
	"go run ./cmd/barberd seed-demo", "date -d",
	"/context", "/units", "/services?unit_id=", "/barbers?unit_id=", "/availability?",
	"barber_id", "/slots/hold", "/release", "/slots/hold/release-all", "hold_id", "external_reference",
	"/appointments/$APT\"", "/reschedule", "/cancel",
	"/notifications/pending?peek=true", "/notifications/ack",
	"/waitlist", "slot.available",
	"/graphql", "createUnit", "createService", "createBarber", "setWorkingHours", "agenda(",
	"select(.id == $apt)",
}

var walkResult = regexp.MustCompile(`(?m)^walk-result (\S+) (\S+) (\S+) (\S+) (\S+) (\S+)$`)

// readmeWalk returns the README's walk blocks, in order, as one script.
func readmeWalk(t *testing.T) string {
	t.Helper()
	return docWalk(t, "../../README.md", walkSteps)
}

// docWalk returns the walk blocks of the markdown file at path, in order,
// as one script, and checks that it calls walkBase and contains every one of
// steps.
func docWalk(t *testing.T, path string, steps []string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := filepath.Base(path)
	var script strings.Builder
	blocks, line, state := 0, 0, "text" // text, mark (after walkMark), block
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line++
		l := sc.Text()
		switch {
		case state == "text" && strings.TrimSpace(l) == walkMark:
			state = "mark"
		case state == "mark" && l == "```sh":
			state = "block"
			blocks++
		case state == "mark":
			t.Fatalf("%s:%d: %s is not followed by a ```sh block", name, line, walkMark)
		case state == "block" && l == "```":
			state = "text"
		case state == "block":
			script.WriteString(l + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if state != "text" {
		t.Fatalf("%s: the last walk block is not closed", name)
	}
	s := script.String()
	if blocks == 0 {
		t.Fatalf("%s has no %s block", name, walkMark)
	}
	if !strings.Contains(s, walkBase) {
		t.Fatalf("the walk of %s does not call %s", name, walkBase)
	}
	for _, step := range steps {
		if !strings.Contains(s, step) {
			t.Errorf("the walk of %s lacks %q", name, step)
		}
	}
	return s
}

// runWalk pastes script (ending with its own epilogue) into bash, strict (walkPrelude), against the server
// s on the database dbURL, in dir, and returns what it printed; a failing
// command fails the test.
func runWalk(t *testing.T, s *server, dir, dbURL, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	body := strings.ReplaceAll(script, walkBase, s.URL)
	cmd := exec.CommandContext(ctx, "bash", "-c", walkPrelude+body)
	cmd.Dir, cmd.WaitDelay = dir, 10*time.Second
	cmd.Env = append(childEnv(), "DATABASE_URL="+dbURL, "WALK_BARBERD="+barberd(t))
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("the walk failed: %v\n%s\nserver log:\n%s", err, out.String(), s.stderr)
	}
	t.Logf("walk ran in %v", time.Since(began))
	return out.String()
}

// needWalkTools skips the test (fails it under CI) without bash, curl or jq.
func needWalkTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed to run the documents' walks: %v", tool, err)
			}
			t.Skipf("%s is needed to run the documents' walks: %v", tool, err)
		}
	}
}

// TestReadmeWalk pastes the README's walks into bash against a demo server,
// on each database, as a newcomer would after "go run ./cmd/barberd demo",
// and checks that every request succeeds and the walk did what it says.
func TestReadmeWalk(t *testing.T) {
	t.Parallel()
	script := readmeWalk(t)
	needWalkTools(t)
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			dir := t.TempDir()
			s := startServer(t, dir, "demo", "--addr", "127.0.0.1:0", "--database-url", dbURL)
			s.waitStdout("playground")
			out := runWalk(t, s, dir, dbURL, script+walkEpilogue)

			m := walkResult.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("the walk's result line is missing:\n%s", out)
			}
			key, admin, apt, shop, day, unit := m[1], m[2], m[3], m[4], m[5], m[6]
			api := s.URL + "/api/integrations/v1"
			if got := call(t, "GET", api+"/appointments/"+apt, key, nil, 200).JSON(t); got["status"] != "cancelled" ||
				got["starts_at"] != day+"T11:00:00" || got["external_reference"] != "chat-42" {
				t.Errorf("the walk's appointment: %v", got)
			}
			// The ack consumed the chatbot's appointment's notifications; only
			// the GraphQL walk's booking, made after it, is pending.
			var pending struct {
				Data []struct {
					AppointmentID string `json:"appointment_id"`
				}
			}
			if err := json.Unmarshal(call(t, "GET", api+"/notifications/pending?peek=true", key, nil, 200).Body, &pending); err != nil {
				t.Fatal(err)
			}
			for _, n := range pending.Data {
				if n.AppointmentID == apt {
					t.Errorf("a notification of %s is still pending after the walk's ack", apt)
				}
			}
			if ids := agendaIDs(t, s.URL, admin, shop, day); len(ids) != 1 {
				t.Errorf("the walk's new shop's agenda on %s: %v", day, ids)
			}
			if ids := agendaIDs(t, s.URL, admin, unit, day); !slices.Contains(ids, apt) {
				t.Errorf("the chatbot's appointment %s is not in its unit's agenda on %s: %v", apt, day, ids)
			}
		})
	}
}

// agendaIDs reads the ids of the appointments in a unit's agenda on day
// through GraphQL with the admin key.
func agendaIDs(t *testing.T, base, admin, unit, day string) []string {
	t.Helper()
	var agenda struct {
		Data struct {
			Agenda struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		Errors []any
	}
	r := call(t, "POST", base+"/graphql", admin, map[string]any{
		"query":     `query($u: ID!, $d: String!) { agenda(unitId: $u, date: $d, first: 500) { edges { node { id } } } }`,
		"variables": map[string]any{"u": unit, "d": day},
	}, 200)
	if err := json.Unmarshal(r.Body, &agenda); err != nil || agenda.Errors != nil {
		t.Fatalf("agenda of %s on %s: %v %s", unit, day, err, r.Body)
	}
	var ids []string
	for _, e := range agenda.Data.Agenda.Edges {
		ids = append(ids, e.Node.ID)
	}
	return ids
}
