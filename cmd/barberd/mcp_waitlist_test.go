package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"barberd/ent/hold"
	"barberd/ent/schema/tenant"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// waitlistJSON is a waitlist entry as the tools answer it.
type waitlistJSON struct {
	ID, Status string
	Replayed   bool
	Offer      *struct {
		Slot   slotJSON
		HoldID *string `json:"hold_id"`
	}
}

// TestMCPWaitlist joins, finds and leaves the waitlist through the tools:
// a join while a matching time is free is the tool error slot_available
// with the times to book instead, a second join of the client is
// already_waiting naming the entry, a cancellation offers the time (the
// entry and its notification show the hold), and leaving releases it.
func TestMCPWaitlist(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newMCPEnv(t, db, serverConfig{})
		a := httpAgent(t, e.srv.URL, keyed(e.key(t, domain.BookingScopes...), "Authorization", nil))
		if len(a.tools) != 19 {
			t.Fatalf("a booking key sees %d tools: %v", len(a.tools), a.tools)
		}
		s := a.lisbon()
		day := nextWeekday(time.Thursday)
		const phone = "+351914444444"
		join := map[string]any{
			"unit_id": s.unit, "service_id": s.haircut, "barber_id": s.joao, "from": day, "to": day,
			"time_from": "17:00", "time_to": "18:00", "client": map[string]any{"name": "Ana Costa", "phone": phone},
		}

		p := a.refused("join_waitlist", join, domain.CodeSlotAvailable)
		if p.Status != 409 || len(p.Alternatives) == 0 || len(p.Alternatives) > 3 {
			t.Fatalf("slot_available: %+v", p)
		}
		for _, alt := range p.Alternatives {
			if at := alt["starts_at"].(string); alt["barber_id"] != s.joao || at < day+"T17:00:00" || at >= day+"T18:00:00" {
				t.Errorf("alternative %v outside the request", alt)
			}
		}
		var first appointmentJSON
		a.ok("book_appointment", s.bookingAt(day+"T17:00:00", "+351915555551", "wl-fill-1"), &first)
		a.ok("book_appointment", s.bookingAt(day+"T17:30:00", "+351915555552", "wl-fill-2"), nil)

		var entry waitlistJSON
		text := a.ok("join_waitlist", join, &entry)
		if !strings.HasPrefix(entry.ID, "wl_") || entry.Status != "waiting" || entry.Replayed || entry.Offer != nil {
			t.Fatalf("joined %+v", entry)
		}
		if !strings.Contains(text, entry.ID) {
			t.Errorf("join summary %q does not name %s", text, entry.ID)
		}
		r, b := a.call("join_waitlist", join)
		var again struct {
			Code            string
			WaitlistEntryID string `json:"waitlist_entry_id"`
		}
		if err := json.Unmarshal(b, &again); err != nil || !r.IsError || again.Code != domain.CodeAlreadyWaiting || again.WaitlistEntryID != entry.ID {
			t.Fatalf("second join: %v %s", err, b)
		}
		p = a.refused("join_waitlist", map[string]any{"unit_id": s.unit, "service_id": s.haircut, "from": day, "to": day,
			"offer_hold_seconds": 5, "client": map[string]any{"name": "Ana Costa", "phone": "+351914444445"}}, domain.CodeValidationFailed)
		if len(p.Errors) == 0 || p.Errors[0].Field != "offer_hold_seconds" {
			t.Errorf("offer_hold_seconds 5: %+v", p.Errors)
		}

		var found listOf[waitlistJSON]
		a.ok("find_client_waitlist", map[string]any{"client_phone": phone, "status": []string{"waiting"}}, &found)
		if len(found.Data) != 1 || found.Data[0].ID != entry.ID {
			t.Fatalf("found %+v", found)
		}
		a.ok("find_client_waitlist", map[string]any{"client_phone": phone, "status": []string{"booked"}}, &found)
		if len(found.Data) != 0 {
			t.Fatalf("found booked %+v", found)
		}
		a.refused("find_client_waitlist", map[string]any{"client_phone": phone, "status": []string{"pending"}}, domain.CodeValidationFailed)

		a.ok("cancel_appointment", map[string]any{"appointment_id": first.ID, "reason": "The client is ill"}, nil)
		offered := awaitOffer(t, a, phone)
		if offered.ID != entry.ID || offered.Offer.Slot.StartsAt != day+"T17:00:00" || offered.Offer.HoldID == nil {
			t.Fatalf("offered %+v", offered)
		}
		var pending listOf[struct {
			Type          string
			WaitlistEntry struct{ ID string } `json:"waitlist_entry"`
			Hold          struct {
				HoldID string `json:"hold_id"`
			}
		}]
		a.ok("get_pending_notifications", nil, &pending)
		told := false
		for _, n := range pending.Data {
			told = told || n.Type == "slot.available" && n.WaitlistEntry.ID == entry.ID && n.Hold.HoldID == *offered.Offer.HoldID
		}
		if !told {
			t.Fatalf("no slot.available for %s in %+v", entry.ID, pending.Data)
		}

		var left waitlistJSON
		for range 2 { // leaving again answers the same
			a.ok("leave_waitlist", map[string]any{"waitlist_entry_id": entry.ID}, &left)
			if left.ID != entry.ID || left.Status != "cancelled" {
				t.Fatalf("left %+v", left)
			}
		}
		h, err := db.Hold.Get(tenant.WithAccount(context.Background(), e.keys.AccountID), *offered.Offer.HoldID)
		if err != nil || h.Status != hold.StatusReleased {
			t.Fatalf("the left entry's hold: %+v %v, want released", h, err)
		}
		a.refused("leave_waitlist", map[string]any{"waitlist_entry_id": "wl_nope"}, domain.CodeWaitlistEntryNotFound)
		p = a.refused("leave_waitlist", map[string]any{"waitlist_entry_id": " "}, domain.CodeValidationFailed)
		if len(p.Errors) == 0 || p.Errors[0].Field != "waitlist_entry_id" {
			t.Errorf("blank id: %+v", p.Errors)
		}
	})
}

// awaitOffer waits (the offer job's 5 s at most) for the client's entry to
// be offered, through find_client_waitlist.
func awaitOffer(t *testing.T, a *agent, phone string) waitlistJSON {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var found listOf[waitlistJSON]
		a.ok("find_client_waitlist", map[string]any{"client_phone": phone, "status": []string{"offered"}}, &found)
		if len(found.Data) == 1 && found.Data[0].Offer != nil {
			return found.Data[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no offer to %s: %+v", phone, found)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
