package slots_test

import (
	"slices"
	"testing"
	"time"

	"barberd/graph/slots"
)

// TestFreeSlotsAcrossDaylightSaving works through shifts that straddle a
// clock change. Starts are written as local time with their UTC offset so the
// two occurrences of an ambiguous time can be told apart.
func TestFreeSlotsAcrossDaylightSaving(t *testing.T) {
	tests := []struct {
		name     string
		zone     string
		date     string
		hours    string
		step     time.Duration
		duration time.Duration
		want     []string
	}{
		{
			name: "New York spring forward: 02:00-02:59 never offered, 01:30 runs into 03:30",
			zone: "America/New_York", date: "2026-03-08", hours: "00:00-06:00",
			step: 30 * time.Minute, duration: time.Hour,
			want: []string{
				"00:00-05:00", "00:30-05:00", "01:00-05:00", "01:30-05:00",
				"03:00-04:00", "03:30-04:00", "04:00-04:00", "04:30-04:00", "05:00-04:00",
			},
		},
		{
			name: "New York spring forward: a two-hour wall span holds one elapsed hour",
			zone: "America/New_York", date: "2026-03-08", hours: "01:00-03:00",
			step: time.Hour, duration: time.Hour,
			want: []string{"01:00-05:00"},
		},
		{
			name: "New York spring forward: a span ending inside the gap ends where the gap ends",
			zone: "America/New_York", date: "2026-03-08", hours: "00:00-02:30",
			step: 30 * time.Minute, duration: time.Hour,
			want: []string{"00:00-05:00", "00:30-05:00", "01:00-05:00"},
		},
		{
			name: "New York fall back: 01:00 and 01:30 offered once, at daylight time",
			zone: "America/New_York", date: "2026-11-01", hours: "00:00-06:00",
			step: 30 * time.Minute, duration: time.Hour,
			want: []string{
				"00:00-04:00", "00:30-04:00", "01:00-04:00", "01:30-04:00",
				"02:00-05:00", "02:30-05:00", "03:00-05:00", "03:30-05:00",
				"04:00-05:00", "04:30-05:00", "05:00-05:00",
			},
		},
		{
			name: "New York fall back: a span inside the repeated hour",
			zone: "America/New_York", date: "2026-11-01", hours: "01:00-02:00",
			step: 30 * time.Minute, duration: time.Hour,
			want: []string{"01:00-04:00", "01:30-04:00"},
		},
		{
			name: "Lisbon spring forward",
			zone: "Europe/Lisbon", date: "2026-03-29", hours: "00:00-06:00",
			step: time.Hour, duration: time.Hour,
			want: []string{"00:00+00:00", "02:00+01:00", "03:00+01:00", "04:00+01:00", "05:00+01:00"},
		},
		{
			name: "Lisbon fall back",
			zone: "Europe/Lisbon", date: "2026-10-25", hours: "00:00-06:00",
			step: time.Hour, duration: time.Hour,
			want: []string{"00:00+01:00", "01:00+01:00", "02:00+00:00", "03:00+00:00", "04:00+00:00", "05:00+00:00"},
		},
		{
			name: "Sydney fall back",
			zone: "Australia/Sydney", date: "2026-04-05", hours: "00:00-06:00",
			step: time.Hour, duration: time.Hour,
			want: []string{"00:00+11:00", "01:00+11:00", "02:00+11:00", "03:00+10:00", "04:00+10:00", "05:00+10:00"},
		},
		{
			name: "Sydney spring forward",
			zone: "Australia/Sydney", date: "2026-10-04", hours: "00:00-06:00",
			step: time.Hour, duration: time.Hour,
			want: []string{"00:00+10:00", "01:00+10:00", "03:00+11:00", "04:00+11:00", "05:00+11:00"},
		},
		{
			name: "Lord Howe half-hour fall back",
			zone: "Australia/Lord_Howe", date: "2026-04-05", hours: "00:00-04:00",
			step: 30 * time.Minute, duration: 30 * time.Minute,
			want: []string{
				"00:00+11:00", "00:30+11:00", "01:00+11:00", "01:30+11:00",
				"02:00+10:30", "02:30+10:30", "03:00+10:30", "03:30+10:30",
			},
		},
		{
			name: "Lord Howe half-hour spring forward",
			zone: "Australia/Lord_Howe", date: "2026-10-04", hours: "00:00-04:00",
			step: 30 * time.Minute, duration: 30 * time.Minute,
			want: []string{
				"00:00+10:30", "00:30+10:30", "01:00+10:30", "01:30+10:30",
				"02:30+11:00", "03:00+11:00", "03:30+11:00",
			},
		},
		{
			name: "Chatham fall back: the span ends an hour later than its wall length",
			zone: "Pacific/Chatham", date: "2026-04-05", hours: "02:00-05:00",
			step: 30 * time.Minute, duration: time.Hour,
			want: []string{"02:00+13:45", "02:30+13:45", "03:00+13:45", "03:30+13:45", "04:00+12:45"},
		},
		{
			name: "Chatham spring forward",
			zone: "Pacific/Chatham", date: "2026-09-27", hours: "02:00-05:00",
			step: 30 * time.Minute, duration: time.Hour,
			want: []string{"02:00+12:45", "02:30+12:45", "04:00+13:45"},
		},
		{
			name: "Chatham spring forward: span starting inside the gap keeps its wall grid",
			zone: "Pacific/Chatham", date: "2026-09-27", hours: "02:50-05:00",
			step: 30 * time.Minute, duration: 30 * time.Minute,
			want: []string{"03:50+13:45", "04:20+13:45"},
		},
		{
			name: "Sao Paulo: midnight does not exist",
			zone: "America/Sao_Paulo", date: "2018-11-04", hours: "00:00-03:00",
			step: 30 * time.Minute, duration: 30 * time.Minute,
			want: []string{"01:00-02:00", "01:30-02:00", "02:00-02:00", "02:30-02:00"},
		},
		{
			name: "Sao Paulo: the evening hour repeats, so 23:30 plus 90 minutes fits before 24:00",
			zone: "America/Sao_Paulo", date: "2019-02-16", hours: "22:00-24:00",
			step: 30 * time.Minute, duration: 90 * time.Minute,
			want: []string{"22:00-02:00", "22:30-02:00", "23:00-02:00", "23:30-02:00"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := mustLoad(t, tt.zone)
			date := mustDate(t, tt.date)
			day := slots.Day{
				Date:     date,
				Location: loc,
				Now:      at(t, loc, date.AddDays(-3).String()+"T12:00:00"),
				Policy:   slots.Policy{Step: tt.step, HorizonDays: 30},
				Duration: tt.duration,
				Barbers:  []slots.Barber{{ID: "ana", Hours: spans(t, tt.hours)}},
			}
			got := slots.FreeSlots(day)
			d := describe(got, loc, true)
			for i := range d {
				d[i] = d[i][:len(d[i])-len(" ana")]
			}
			if !slices.Equal(d, tt.want) {
				t.Errorf("FreeSlots =\n  %q\nwant\n  %q", d, tt.want)
			}
			checkSlots(t, day, got)
		})
	}
}
