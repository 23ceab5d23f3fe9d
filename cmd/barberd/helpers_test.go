package main

import (
	"barberd/demo"
	"barberd/rest/apitest"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests run the real barberd binary, built once per test
// process, as a script or an operator would.

var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// barberd returns the path of the built binary, building it on first use.
func barberd(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binError = os.MkdirTemp("", "barberd-e2e-")
		if binError != nil {
			return
		}
		binPath = filepath.Join(binDir, "barberd")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binError = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

// childEnv is the environment of a barberd process: ours without the
// settings barberd reads, so only the test's flags count.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "DATABASE_URL" || strings.HasPrefix(k, "BARBERD_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runCLI runs one barberd subcommand to completion in dir ("" for a fresh
// temporary directory) and returns its stdout, stderr and exit code.
func runCLI(t testing.TB, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, barberd(t), args...)
	cmd.Dir, cmd.Env = dir, childEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok || ctx.Err() != nil {
			// What it said before it was stopped tells where it waited.
			t.Fatalf("barberd %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out.String(), errb.String())
		}
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// mustCLI is runCLI that fails the test unless the command exits 0.
func mustCLI(t testing.TB, dir string, args ...string) string {
	t.Helper()
	stdout, stderr, code := runCLI(t, dir, args...)
	if code != 0 {
		t.Fatalf("barberd %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// syncBuffer is a bytes.Buffer safe for one writer and many readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is a running barberd serve or demo process.
type server struct {
	t      testing.TB
	cmd    *exec.Cmd
	URL    string // http://127.0.0.1:PORT
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	code   int
}

// startServer starts barberd with args (which should include --addr
// 127.0.0.1:0) in dir and waits for its "listening" log line, from which it
// learns the address.
func startServer(t testing.TB, dir string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(barberd(t), args...)
	cmd.Dir, cmd.Env = dir, childEnv()
	s := &server{t: t, cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout = s.stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Text()
			s.stderr.Write([]byte(line + "\n"))
			if found {
				continue
			}
			var entry struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "listening" && entry.Addr != "" {
				found = true
				addr <- entry.Addr
			}
		}
		_, _ = io.Copy(s.stderr, pipe)
		_ = cmd.Wait()
		s.code = cmd.ProcessState.ExitCode()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case a := <-addr:
		s.URL = "http://" + a
	case <-s.done:
		t.Fatalf("barberd %s exited (%d) before listening\nstderr: %s", strings.Join(args, " "), s.code, s.stderr)
	case <-time.After(90 * time.Second):
		t.Fatalf("barberd %s did not log \"listening\" in time\nstderr: %s", strings.Join(args, " "), s.stderr)
	}
	return s
}

// stop sends SIGTERM and returns the exit code and how long the exit took.
func (s *server) stop() (int, time.Duration) {
	s.t.Helper()
	began := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-s.done:
		return s.code, time.Since(began)
	case <-time.After(15 * time.Second):
		s.t.Fatalf("barberd did not exit within 15 s of SIGTERM\nstderr: %s", s.stderr)
		return -1, 0
	}
}

// waitStdout waits until the process's stdout contains want.
func (s *server) waitStdout(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := s.stdout.String()
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("stdout lacks %q: %s", want, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reply is one HTTP exchange's outcome.
type reply = apitest.Answer

// call is apitest.Do that fails the test on a transport error or an unexpected
// status.
func call(t testing.TB, method, url, key string, body any, want int) *reply {
	t.Helper()
	r, err := apitest.Do(nil, method, url, key, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if r.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, url, r.Status, want, r.Body)
	}
	return r
}

// demoKeys is what seed-demo prints.
type demoKeys struct {
	AccountID   string `json:"account_id"`
	APIKey      string `json:"api_key"`
	AdminAPIKey string `json:"admin_api_key"`
}

// seedDemo runs seed-demo on the database and parses its one JSON line.
func seedDemo(t testing.TB, dbURL string) demoKeys {
	t.Helper()
	out := mustCLI(t, "", "seed-demo", "--database-url", dbURL)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("seed-demo printed %d lines, want one JSON line: %q", len(lines), out)
	}
	var k demoKeys
	dec := json.NewDecoder(strings.NewReader(lines[0]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&k); err != nil {
		t.Fatalf("seed-demo output %q: %v", out, err)
	}
	if !strings.HasPrefix(k.AccountID, "acc") || !strings.HasPrefix(k.APIKey, "bk_") || !strings.HasPrefix(k.AdminAPIKey, "bk_") || k.APIKey == k.AdminAPIKey {
		t.Fatalf("seed-demo output %+v", k)
	}
	return k
}

// demoIDs are the ids a booking at the Lisbon demo unit needs.
type demoIDs struct{ unit, haircut, joao string }

// lisbonIDs finds the Lisbon demo unit, its haircut and João through REST.
func lisbonIDs(t testing.TB, base, key string) demoIDs {
	t.Helper()
	var ids demoIDs
	list := func(path string) []map[string]any {
		var l struct{ Data []map[string]any }
		if err := json.Unmarshal(call(t, "GET", base+"/api/integrations/v1"+path, key, nil, 200).Body, &l); err != nil {
			t.Fatal(err)
		}
		return l.Data
	}
	find := func(l []map[string]any, name string) string {
		for _, x := range l {
			if x["name"] == name {
				return x["id"].(string)
			}
		}
		t.Fatalf("no %q in %v", name, l)
		return ""
	}
	ids.unit = find(list("/units"), "Barbearia Chiado")
	ids.haircut = find(list("/services?unit_id="+ids.unit), "Haircut")
	ids.joao = find(list("/barbers?unit_id="+ids.unit), "João Silva")
	return ids
}

// lisbonOf is lisbonIDs for a demo account seeded in this process.
func lisbonOf(keys *demo.Keys) demoIDs {
	return demoIDs{unit: keys.IDs["Barbearia Chiado"], haircut: keys.IDs["Haircut"], joao: keys.IDs["João Silva"]}
}

// bookingAt is a create body for a haircut with João at a Lisbon wall time.
func (ids demoIDs) bookingAt(startsAt, phone, ref string) map[string]any {
	b := map[string]any{
		"unit_id": ids.unit, "service_id": ids.haircut, "barber_id": ids.joao, "starts_at": startsAt,
		"client": map[string]any{"name": "E2E Client", "phone": phone},
	}
	if ref != "" {
		b["external_reference"] = ref
	}
	return b
}

// nextWeekday returns a date string of the next given weekday at least two
// days from now in Lisbon, so the booking window and lead time admit it.
func nextWeekday(wd time.Weekday) string {
	loc, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		panic(err)
	}
	d := time.Now().In(loc).AddDate(0, 0, 2)
	for d.Weekday() != wd {
		d = d.AddDate(0, 0, 1)
	}
	return d.Format("2006-01-02")
}
