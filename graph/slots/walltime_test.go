package slots_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"barberd/graph/slots"
)

func TestParseWallTime(t *testing.T) {
	tests := []struct {
		name, in string
		want     slots.WallTime
		wantErr  bool
	}{
		{name: "valid", in: "2026-06-15T09:30:05", want: slots.WallTime{Date: slots.Date{Year: 2026, Month: time.June, Day: 15}, Hour: 9, Minute: 30, Second: 5}},
		{name: "midnight", in: "2026-06-15T00:00:00", want: slots.WallTime{Date: slots.Date{Year: 2026, Month: time.June, Day: 15}}},
		{name: "last second", in: "2026-12-31T23:59:59", want: slots.WallTime{Date: slots.Date{Year: 2026, Month: time.December, Day: 31}, Hour: 23, Minute: 59, Second: 59}},
		{name: "offset", in: "2026-06-15T09:30:00+01:00", wantErr: true},
		{name: "zulu", in: "2026-06-15T09:30:00Z", wantErr: true},
		{name: "fractional seconds", in: "2026-06-15T09:30:00.000", wantErr: true},
		{name: "date only", in: "2026-06-15", wantErr: true},
		{name: "no seconds", in: "2026-06-15T09:30", wantErr: true},
		{name: "hour 25", in: "2026-06-15T25:00:00", wantErr: true},
		{name: "hour 24", in: "2026-06-15T24:00:00", wantErr: true},
		{name: "minute 60", in: "2026-06-15T09:60:00", wantErr: true},
		{name: "leap second", in: "2026-06-30T23:59:60", wantErr: true},
		{name: "february 30", in: "2026-02-30T10:00:00", wantErr: true},
		{name: "space instead of T", in: "2026-06-15 09:30:00", wantErr: true},
		{name: "lowercase t", in: "2026-06-15t09:30:00", wantErr: true},
		{name: "leading space", in: " 2026-06-15T09:30:00", wantErr: true},
		{name: "trailing space", in: "2026-06-15T09:30:00 ", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := slots.ParseWallTime(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseWallTime(%q) = %v, want error", tt.in, got)
				}
				const form = "must be a local time in the form YYYY-MM-DDTHH:MM:SS, without offset"
				if !strings.Contains(err.Error(), form) {
					t.Errorf("error %q does not state the expected form", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseWallTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

// TestZoneData pins the transitions the DST tests below rely on, so that a
// change in the tz database shows up here rather than as a puzzling slot
// mismatch: the offset just before and at each transition instant.
func TestZoneData(t *testing.T) {
	tests := []struct {
		zone       string
		transition string // UTC instant of the change
		before     string // offset in force just before it
		after      string // offset from it on
	}{
		{"Europe/Lisbon", "2026-03-29T01:00:00Z", "+00:00", "+01:00"},
		{"Europe/Lisbon", "2026-10-25T01:00:00Z", "+01:00", "+00:00"},
		{"America/New_York", "2026-03-08T07:00:00Z", "-05:00", "-04:00"},
		{"America/New_York", "2026-11-01T06:00:00Z", "-04:00", "-05:00"},
		{"Australia/Sydney", "2026-04-04T16:00:00Z", "+11:00", "+10:00"},
		{"Australia/Sydney", "2026-10-03T16:00:00Z", "+10:00", "+11:00"},
		{"Australia/Lord_Howe", "2026-04-04T15:00:00Z", "+11:00", "+10:30"},
		{"Australia/Lord_Howe", "2026-10-03T15:30:00Z", "+10:30", "+11:00"},
		{"Pacific/Chatham", "2026-04-04T14:00:00Z", "+13:45", "+12:45"},
		{"Pacific/Chatham", "2026-09-26T14:00:00Z", "+12:45", "+13:45"},
		{"America/Sao_Paulo", "2018-11-04T03:00:00Z", "-03:00", "-02:00"},
		{"America/Sao_Paulo", "2019-02-17T02:00:00Z", "-02:00", "-03:00"},
	}
	for _, tt := range tests {
		t.Run(tt.zone+" "+tt.transition, func(t *testing.T) {
			loc := mustLoad(t, tt.zone)
			tr := utc(t, tt.transition)
			if got := tr.Add(-time.Second).In(loc).Format("-07:00"); got != tt.before {
				t.Errorf("offset before = %s, want %s", got, tt.before)
			}
			if got := tr.In(loc).Format("-07:00"); got != tt.after {
				t.Errorf("offset after = %s, want %s", got, tt.after)
			}
		})
	}
}

func TestWallTimeIn(t *testing.T) {
	const gap = "nonexistent"
	tests := []struct {
		name string
		zone string
		wall string
		want string // UTC instant, or gap
	}{
		{"plain summer day", "Europe/Lisbon", "2026-06-15T09:00:00", "2026-06-15T08:00:00Z"},
		{"UTC", "UTC", "2026-03-29T01:30:00", "2026-03-29T01:30:00Z"},

		{"Lisbon before gap", "Europe/Lisbon", "2026-03-29T00:59:59", "2026-03-29T00:59:59Z"},
		{"Lisbon gap start", "Europe/Lisbon", "2026-03-29T01:00:00", gap},
		{"Lisbon in gap", "Europe/Lisbon", "2026-03-29T01:30:00", gap},
		{"Lisbon gap last second", "Europe/Lisbon", "2026-03-29T01:59:59", gap},
		{"Lisbon gap end", "Europe/Lisbon", "2026-03-29T02:00:00", "2026-03-29T01:00:00Z"},
		{"Lisbon before overlap", "Europe/Lisbon", "2026-10-25T00:59:59", "2026-10-24T23:59:59Z"},
		{"Lisbon overlap start, first occurrence", "Europe/Lisbon", "2026-10-25T01:00:00", "2026-10-25T00:00:00Z"},
		{"Lisbon in overlap, first occurrence", "Europe/Lisbon", "2026-10-25T01:30:00", "2026-10-25T00:30:00Z"},
		{"Lisbon after overlap", "Europe/Lisbon", "2026-10-25T02:00:00", "2026-10-25T02:00:00Z"},

		{"New York before gap", "America/New_York", "2026-03-08T01:59:00", "2026-03-08T06:59:00Z"},
		{"New York in gap", "America/New_York", "2026-03-08T02:30:00", gap},
		{"New York gap end", "America/New_York", "2026-03-08T03:00:00", "2026-03-08T07:00:00Z"},
		{"New York before overlap", "America/New_York", "2026-11-01T00:59:00", "2026-11-01T04:59:00Z"},
		{"New York in overlap, first occurrence", "America/New_York", "2026-11-01T01:30:00", "2026-11-01T05:30:00Z"},
		{"New York after overlap", "America/New_York", "2026-11-01T02:00:00", "2026-11-01T07:00:00Z"},

		{"Sydney before overlap", "Australia/Sydney", "2026-04-05T01:59:00", "2026-04-04T14:59:00Z"},
		{"Sydney overlap start, first occurrence", "Australia/Sydney", "2026-04-05T02:00:00", "2026-04-04T15:00:00Z"},
		{"Sydney in overlap, first occurrence", "Australia/Sydney", "2026-04-05T02:30:00", "2026-04-04T15:30:00Z"},
		{"Sydney after overlap", "Australia/Sydney", "2026-04-05T03:00:00", "2026-04-04T17:00:00Z"},
		{"Sydney before gap", "Australia/Sydney", "2026-10-04T01:59:59", "2026-10-03T15:59:59Z"},
		{"Sydney in gap", "Australia/Sydney", "2026-10-04T02:30:00", gap},
		{"Sydney gap end", "Australia/Sydney", "2026-10-04T03:00:00", "2026-10-03T16:00:00Z"},

		{"Lord Howe before overlap", "Australia/Lord_Howe", "2026-04-05T01:29:00", "2026-04-04T14:29:00Z"},
		{"Lord Howe in half-hour overlap, first occurrence", "Australia/Lord_Howe", "2026-04-05T01:45:00", "2026-04-04T14:45:00Z"},
		{"Lord Howe after overlap", "Australia/Lord_Howe", "2026-04-05T02:00:00", "2026-04-04T15:30:00Z"},
		{"Lord Howe before gap", "Australia/Lord_Howe", "2026-10-04T01:59:00", "2026-10-03T15:29:00Z"},
		{"Lord Howe in half-hour gap", "Australia/Lord_Howe", "2026-10-04T02:15:00", gap},
		{"Lord Howe gap end", "Australia/Lord_Howe", "2026-10-04T02:30:00", "2026-10-03T15:30:00Z"},

		{"Chatham before overlap", "Pacific/Chatham", "2026-04-05T02:44:00", "2026-04-04T12:59:00Z"},
		{"Chatham in overlap, first occurrence", "Pacific/Chatham", "2026-04-05T03:00:00", "2026-04-04T13:15:00Z"},
		{"Chatham after overlap", "Pacific/Chatham", "2026-04-05T03:45:00", "2026-04-04T15:00:00Z"},
		{"Chatham before gap", "Pacific/Chatham", "2026-09-27T02:44:00", "2026-09-26T13:59:00Z"},
		{"Chatham in gap", "Pacific/Chatham", "2026-09-27T03:00:00", gap},
		{"Chatham gap end", "Pacific/Chatham", "2026-09-27T03:45:00", "2026-09-26T14:00:00Z"},

		{"Sao Paulo last second before gap", "America/Sao_Paulo", "2018-11-03T23:59:59", "2018-11-04T02:59:59Z"},
		{"Sao Paulo midnight does not exist", "America/Sao_Paulo", "2018-11-04T00:00:00", gap},
		{"Sao Paulo in gap", "America/Sao_Paulo", "2018-11-04T00:30:00", gap},
		{"Sao Paulo gap end", "America/Sao_Paulo", "2018-11-04T01:00:00", "2018-11-04T03:00:00Z"},
		{"Sao Paulo before overlap", "America/Sao_Paulo", "2019-02-16T22:59:00", "2019-02-17T00:59:00Z"},
		{"Sao Paulo overlap start, first occurrence", "America/Sao_Paulo", "2019-02-16T23:00:00", "2019-02-17T01:00:00Z"},
		{"Sao Paulo in overlap, first occurrence", "America/Sao_Paulo", "2019-02-16T23:30:00", "2019-02-17T01:30:00Z"},
		{"Sao Paulo next midnight", "America/Sao_Paulo", "2019-02-17T00:00:00", "2019-02-17T03:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := mustLoad(t, tt.zone)
			w, err := slots.ParseWallTime(tt.wall)
			if err != nil {
				t.Fatal(err)
			}
			got, err := w.In(loc)
			if tt.want == gap {
				if !errors.Is(err, slots.ErrNonexistentTime) {
					t.Fatalf("In = %v, %v; want ErrNonexistentTime", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("In: %v", err)
			}
			if want := utc(t, tt.want); !got.Equal(want) {
				t.Errorf("In = %s, want %s", got.UTC().Format(time.RFC3339), tt.want)
			}
			if got.Location() != loc {
				t.Errorf("In returned location %v, want %v", got.Location(), loc)
			}
			if back := slots.Local(got, loc); back != tt.wall {
				t.Errorf("Local(In(w)) = %s, want %s", back, tt.wall)
			}
		})
	}
}

func TestLocal(t *testing.T) {
	tests := []struct {
		name    string
		instant string
		zone    string
		want    string
	}{
		{"UTC", "2026-06-15T08:00:00Z", "UTC", "2026-06-15T08:00:00"},
		{"summer time", "2026-06-15T08:00:00Z", "Europe/Lisbon", "2026-06-15T09:00:00"},
		{"first 01:30 of a fall-back night", "2026-11-01T05:30:00Z", "America/New_York", "2026-11-01T01:30:00"},
		{"second 01:30 of a fall-back night", "2026-11-01T06:30:00Z", "America/New_York", "2026-11-01T01:30:00"},
		{"quarter-hour offset", "2026-06-15T08:00:00Z", "Pacific/Chatham", "2026-06-15T20:45:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slots.Local(utc(t, tt.instant), mustLoad(t, tt.zone)); got != tt.want {
				t.Errorf("Local = %s, want %s", got, tt.want)
			}
		})
	}
}

// AppendLocal and AppendUTC write what Local and UTC return, in any zone,
// on any second, across the years their fast path covers and past them.
func TestAppendLocalUTC(t *testing.T) {
	zones := []string{"UTC", "Europe/Lisbon", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "America/St_Johns"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, z := range zones {
		loc, err := time.LoadLocation(z)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2000 {
			sec := rng.Int64N(400 * 365 * 86400) // 1800 to 2200
			if i%100 == 0 {
				sec = rng.Int64N(1<<40) - 1<<39 // far outside
			}
			at := time.Unix(sec-170*365*86400, rng.Int64N(1e9))
			if got, want := string(slots.AppendLocal([]byte("x"), at, loc)), "x"+slots.Local(at, loc); got != want {
				t.Fatalf("AppendLocal(%v, %s) = %q, want %q", at, z, got, want)
			}
			if got, want := string(slots.AppendUTC(nil, at.In(loc))), slots.UTC(at); got != want {
				t.Fatalf("AppendUTC(%v) = %q, want %q", at, got, want)
			}
		}
	}
}
