package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The answer floor (--answer-floor; the availability, range and next
// scenarios) is the scenario's own answers written from memory by a bare
// net/http server in barberbench: answerSamples real answers of the
// scenario's requests, fetched from barberd before the floors, served in
// turn over loopback keep-alive connections at the same concurrency. It is
// the least any HTTP server in Go can cost to send those bytes on this
// machine, with no work of barberd's: what separates a read scenario from
// it is barberd's own work, and what separates it from GET /healthz is the
// answers' size. Its server runs in barberbench, so --pid reports no CPU
// of barberd's for it.

// answerSamples is how many real answers a floor writes in turn.
const answerSamples = 64

// answerServer is a bare net/http server on loopback that writes stored
// answers: GET /N writes answer N, as barberd writes an encoded answer
// (its length known, in one write).
type answerServer struct {
	answers [][]byte
	srv     *http.Server
	cl      *apiClient
}

// serveSamples fetches n answers from barberd, at the paths path gives
// (called once for each, in turn), and serves them.
func (b *bench) serveSamples(ctx context.Context, rng *mrand.Rand, n int, path func(*worker) string) (*answerServer, error) {
	w := &worker{b: b, rec: newRecorder(), rng: rng, ph: &phase{deadline: time.Now().Add(time.Hour)}}
	w.ph.budget.Store(int64(n))
	answers := make([][]byte, 0, n)
	for range n {
		var body json.RawMessage
		ex, err := w.do(ctx, "sample", http.MethodGet, path(w), nil, &body)
		if err != nil || ex.status != http.StatusOK {
			return nil, fmt.Errorf("a sample answer: status %d: %v", ex.status, err)
		}
		answers = append(answers, body)
	}
	return serveAnswers(answers, b.c.concurrency)
}

func serveAnswers(answers [][]byte, conns int) (*answerServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a := &answerServer{answers: answers}
	a.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil || i < 0 || i >= len(a.answers) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(a.answers[i])))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(a.answers[i])
	})}
	go func() { _ = a.srv.Serve(ln) }()
	a.cl = newAPIClient(&url.URL{Scheme: "http", Host: ln.Addr().String()}, "", conns+4)
	return a, nil
}

// get asks for answer i (modulo their number) and checks that it came.
func (a *answerServer) get(ctx context.Context, i int) error {
	ex, err := a.cl.send(ctx, newRecorder(), "answer", http.MethodGet, "//"+strconv.Itoa(i%len(a.answers)), nil, nil)
	if err == nil && ex.status != http.StatusOK {
		err = fmt.Errorf("status %d", ex.status)
	}
	return err
}

func (a *answerServer) close() {
	if a != nil && a.srv != nil {
		_ = a.srv.Close()
	}
}

// readPaths are the read scenarios an answer floor is measured for, with
// the path of one of their requests.
var readPaths = map[string]func(*worker) string{
	"availability": (*worker).availabilityPath,
	"range":        (*worker).rangePath,
	"next":         (*worker).nextPath,
}

// answerFloorPhase measures the answer floor (--answer-floor) of a read
// scenario, after the static-body floor.
func (b *bench) answerFloorPhase(ctx context.Context, rep *Report) error {
	path := readPaths[b.c.scenario]
	if !b.c.answerFloor || path == nil {
		return nil
	}
	srv, err := b.serveSamples(ctx, mrand.New(mrand.NewPCG(b.c.seed, 1)), answerSamples, path)
	if err != nil {
		return fmt.Errorf("answer floor: %w", err)
	}
	defer srv.close()
	bytes := 0
	for _, a := range srv.answers {
		bytes += len(a)
	}
	rep.AnswerBytes = bytes / len(srv.answers)
	fmt.Fprintf(b.logOut, "barberbench: answer floor (%d answers of %d bytes on average, from memory) %s\n", len(srv.answers), rep.AnswerBytes, b.c.floorDuration)
	var n atomic.Int64
	rep.AnswerFloor = b.timedFloor(ctx, rep, "answer", "answer_floor", "the answer floor (its server is barberbench's)", func(ctx context.Context) error {
		return srv.get(ctx, int(n.Add(1)))
	})
	if rep.AnswerFloor != nil && rep.HTTPFloor != nil && rep.HTTPFloor.PerSec > 0 {
		rep.AnswerFloor.ThroughputRatio = round2(rep.AnswerFloor.PerSec / rep.HTTPFloor.PerSec)
	}
	return nil
}

// timedFloor measures a floor made of op at the scenario's concurrency for
// --floor-duration: each call timed and recorded under name, a failure
// logged (as the floor's label) and followed by a pause, errStop ending
// its worker; and the CPU a call cost.
func (b *bench) timedFloor(ctx context.Context, rep *Report, name, phase, label string, op func(context.Context) error) *EndpointStats {
	cpu0 := b.meter.read()
	rec, wall := b.runPhase(ctx, b.c.concurrency, b.c.floorDuration, func(w *worker, ctx context.Context) error {
		if !w.ph.admit() {
			return errStop
		}
		start := time.Now()
		switch err := op(ctx); {
		case errors.Is(err, errStop):
			return errStop
		case err == nil:
			w.rec.record(name, time.Since(start), 200, "")
		case ctx.Err() == nil:
			w.rec.record(name, time.Since(start), 500, "error")
			fmt.Fprintf(b.logOut, "barberbench: %s: %v\n", label, err)
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	})
	return b.floorStats(rep, rec, wall, cpu0, name, phase, label)
}
