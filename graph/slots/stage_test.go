package slots_test

import (
	"testing"
	"time"

	"barberd/graph/slots"
)

// Each barber gets the stage of the last rule that leaves any of its starts,
// and keeps it until the last start it rests on is closer than the lead.
func TestStages(t *testing.T) {
	loc := mustLoad(t, "Europe/Lisbon")
	// Sunday 2027-03-28: Lisbon springs forward at 01:00 to 02:00.
	date := "2027-03-28"
	now := at(t, loc, date+"T00:00:00") // the lead reaches 02:00, just after the gap
	iv := func(from, to string) slots.Interval {
		return slots.Interval{Start: at(t, loc, date+"T"+from), End: at(t, loc, date+"T"+to)}
	}
	night := spans(t, "00:00-03:00") // across the gap: 00:00-01:00 and 02:00-03:00
	d := slots.Day{
		Date: mustDate(t, date), Location: loc, Now: now,
		Policy:   slots.Policy{Step: 30 * time.Minute, MinLead: time.Hour, HorizonDays: 30},
		Duration: 30 * time.Minute,
		Barbers: []slots.Barber{
			{ID: "closed"},
			{ID: "lead", Hours: spans(t, "00:00-01:00")},
			{ID: "off", Hours: night, TimeOff: []slots.Interval{iv("02:00:00", "03:00:00")}},
			{ID: "booked", Hours: night, TimeOff: []slots.Interval{iv("02:30:00", "03:00:00")}, Busy: []slots.Interval{iv("02:00:00", "02:30:00")}},
			{ID: "free", Hours: night},
		},
	}
	want := []slots.BarberStage{
		{ID: "closed", Stage: slots.StageClosed},
		{ID: "lead", Stage: slots.StageLead},
		{ID: "off", Stage: slots.StageTimeOff, Until: at(t, loc, date+"T02:30:00").Add(-time.Hour)},
		{ID: "booked", Stage: slots.StageBooked, Until: at(t, loc, date+"T02:00:00").Add(-time.Hour)},
		{ID: "free", Stage: slots.StageFree, Until: at(t, loc, date+"T02:30:00").Add(-time.Hour)},
	}
	got := slots.Stages(d)
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Stage != want[i].Stage || !got[i].Until.Equal(want[i].Until) {
			t.Errorf("barber %s: got %+v, want %+v", want[i].ID, got[i], want[i])
		}
	}
	if !d.InWindow() {
		t.Error("today is not in the window")
	}
	d.Date = mustDate(t, "2027-03-27")
	if d.InWindow() {
		t.Error("yesterday is in the window")
	}
}
