package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"barberd/rest/view"
)

// The HTTP write floor (--http-write-floor) is the database write floor
// behind a bare net/http server in barberbench: each request's JSON body
// decoded, the write's essential SQL run (package floor, the same
// transaction as the database write floor), and an appointment's JSON
// answer encoded and written back, over loopback keep-alive connections
// at the same concurrency. It is the least an HTTP service that makes the
// write in Go can cost on this machine, with no code of barberd's: what
// separates a write scenario from it is barberd's own work, and what
// separates it from the database write floor is HTTP, JSON and Go's
// runtime sharing the cores with the database. Its server runs in
// barberbench, so the CPU a request that --pid reports for it is the
// database's alone.

// httpWriteFloor is the floor's server and the client that drives it.
type httpWriteFloor struct {
	srv *http.Server
	cl  *apiClient
}

// errPoolStatus answers a request the floor has no booking left for (a
// cancel or reschedule floor that used every booking it prepared).
const errPoolStatus = http.StatusGone

// startHTTPWriteFloor serves the database write floor's writes on a
// loopback port.
func (b *bench) startHTTPWriteFloor(conns int) (*httpWriteFloor, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in writeRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		err := b.floor.write(r.Context())
		switch {
		case errors.Is(err, errPoolSpent):
			w.WriteHeader(errPoolStatus)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		body, err := json.Marshal(floorAnswer(in, time.Now()))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(ln) }()
	return &httpWriteFloor{srv: srv, cl: newAPIClient(&url.URL{Scheme: "http", Host: ln.Addr().String()}, "", conns+4)}, nil
}

func (f *httpWriteFloor) close() { _ = f.srv.Close() }

// writeRequest is the body the floor's client sends: a create's, as a
// chatbot sends it.
type writeRequest struct {
	UnitID            string `json:"unit_id"`
	ServiceID         string `json:"service_id"`
	BarberID          string `json:"barber_id"`
	StartAt           string `json:"start_at"`
	ExternalReference string `json:"external_reference"`
	Client            struct {
		Name  string `json:"name"`
		Phone string `json:"phone"`
		Email string `json:"email"`
	} `json:"client"`
}

// floorRequest is a create's body for the floor, with ids of barberd's
// length and shape.
func floorRequest(i int64) writeRequest {
	var r writeRequest
	r.UnitID, r.ServiceID, r.BarberID = "unt_01m8p1s58ex2x81s5skffq2mbs", "svc_01m8p1s58ex2x81s5skffq2mbs", "brb_01m8p1s58ffhf2p6vabsjt4seg"
	r.StartAt = "2026-12-19T10:00:00+00:00"
	r.ExternalReference = fmt.Sprintf("floor-%d", i)
	r.Client.Name, r.Client.Phone, r.Client.Email = "Ana Silva", "+351912345678", "ana@example.com"
	return r
}

// floorAnswer is the appointment a create answers with, in REST v1's form.
func floorAnswer(in writeRequest, at time.Time) view.Appointment {
	ts := at.UTC().Format(time.RFC3339)
	ref := in.ExternalReference
	return view.Appointment{
		ID: "apt_01m8p1s58ffhf2p6vabsjt4seg", Status: "confirmed",
		UnitID: in.UnitID, UnitName: "Barbearia Central", ServiceID: in.ServiceID, ServiceName: "Corte de cabelo",
		BarberID: in.BarberID, BarberName: "João Pereira",
		StartsAt: in.StartAt, EndsAt: in.StartAt, StartsAtUTC: ts, EndsAtUTC: ts, Timezone: "Europe/Lisbon",
		DurationMinutes: 30, Price: view.Price{Amount: 1500, Currency: "EUR"},
		Client:            view.Client{ID: "cli_01m8p1s58ffhf2p6vabsjt4seg", Name: in.Client.Name, Phone: in.Client.Phone, Email: &in.Client.Email},
		ExternalReference: &ref, CreatedAt: ts, UpdatedAt: ts,
	}
}

// httpWriteFloorPhase measures the floor after the database write floor.
func (b *bench) httpWriteFloorPhase(ctx context.Context, rep *Report) error {
	if b.floor == nil || !b.c.httpWriteFloor {
		return nil
	}
	if err := b.floor.prepare(ctx, b.c.concurrency, b.c.floorDuration); err != nil {
		return err
	}
	hf, err := b.startHTTPWriteFloor(b.c.concurrency)
	if err != nil {
		return err
	}
	defer hf.close()
	fmt.Fprintf(b.logOut, "barberbench: HTTP write floor (%s) %s\n", b.floor.op, b.c.floorDuration)
	var n atomic.Int64
	cpu0 := b.meter.read()
	rec, wall := b.runPhase(ctx, b.c.concurrency, b.c.floorDuration, func(w *worker, ctx context.Context) error {
		if !w.ph.admit() {
			return errStop
		}
		ex, err := hf.cl.send(ctx, w.rec, "http write", http.MethodPost, "//w", floorRequest(n.Add(1)), nil)
		switch {
		case err == nil && ex.status == errPoolStatus:
			return errStop
		case err == nil && ex.status != http.StatusCreated && ctx.Err() == nil:
			fmt.Fprintf(b.logOut, "barberbench: HTTP write floor: status %d\n", ex.status)
			time.Sleep(10 * time.Millisecond)
		case err != nil && ctx.Err() == nil:
			fmt.Fprintf(b.logOut, "barberbench: HTTP write floor: %v\n", err)
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	})
	rep.HTTPWriteFloor = b.floorStats(rep, rec, wall, cpu0, "http write", "http_write_floor", "the HTTP write floor (its server is barberbench's)")
	return nil
}
