package slots_test

import (
	"fmt"
	"testing"
	"time"

	"barberd/graph/slots"
)

func TestParseDate(t *testing.T) {
	tests := []struct {
		name, in string
		want     slots.Date
		wantErr  bool
	}{
		{name: "ordinary day", in: "2026-06-15", want: slots.Date{Year: 2026, Month: time.June, Day: 15}},
		{name: "leap day", in: "2028-02-29", want: slots.Date{Year: 2028, Month: time.February, Day: 29}},
		{name: "not a leap year", in: "2026-02-29", wantErr: true},
		{name: "february 30", in: "2026-02-30", wantErr: true},
		{name: "april 31", in: "2026-04-31", wantErr: true},
		{name: "month 13", in: "2026-13-01", wantErr: true},
		{name: "month 00", in: "2026-00-10", wantErr: true},
		{name: "day 00", in: "2026-01-00", wantErr: true},
		{name: "unpadded", in: "2026-6-15", wantErr: true},
		{name: "slashes", in: "2026/06/15", wantErr: true},
		{name: "with time", in: "2026-06-15T10:00:00", wantErr: true},
		{name: "signed month", in: "2026-+6-15", wantErr: true},
		{name: "trailing space", in: "2026-06-15 ", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := slots.ParseDate(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseDate(%q) = %v, want error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseDate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

func TestDateArithmetic(t *testing.T) {
	d := slots.Date{Year: 2026, Month: time.December, Day: 31}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"next day crosses the year", d.AddDays(1), slots.Date{Year: 2027, Month: time.January, Day: 1}},
		{"back over a leap day", slots.Date{Year: 2028, Month: time.March, Day: 1}.AddDays(-1), slots.Date{Year: 2028, Month: time.February, Day: 29}},
		{"zero days", d.AddDays(0), d},
		{"weekday", slots.Date{Year: 2026, Month: time.June, Day: 14}.Weekday(), time.Sunday},
		{"compare before", d.Compare(d.AddDays(1)), -1},
		{"compare equal", d.Compare(d), 0},
		{"compare after", d.AddDays(40).Compare(d), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestDateOf(t *testing.T) {
	instant := utc(t, "2026-06-15T23:30:00Z")
	tests := []struct {
		name string
		zone string
		want string
	}{
		{"same day in UTC", "UTC", "2026-06-15"},
		{"next day east of Greenwich", "Europe/Lisbon", "2026-06-16"},
		{"same day west of Greenwich", "America/New_York", "2026-06-15"},
		{"next day far east", "Pacific/Chatham", "2026-06-16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slots.DateOf(instant, mustLoad(t, tt.zone)).String(); got != tt.want {
				t.Errorf("DateOf = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDateStart(t *testing.T) {
	tests := []struct {
		name, zone, date string
		want             string
	}{
		{"midnight in UTC", "UTC", "2027-03-02", "2027-03-02T00:00:00Z"},
		{"west of Greenwich", "America/Sao_Paulo", "2027-03-02", "2027-03-02T03:00:00Z"},
		{"spring forward later in the day", "Europe/Lisbon", "2027-03-28", "2027-03-28T00:00:00Z"},
		{"the day after spring forward", "Europe/Lisbon", "2027-03-29", "2027-03-28T23:00:00Z"},
		// Brazil's clocks went from 00:00 to 01:00 on 2018-11-04: the day
		// starts at 01:00, -02.
		{"midnight skipped", "America/Sao_Paulo", "2018-11-04", "2018-11-04T03:00:00Z"},
		// ... and from 00:00 back to 23:00 on 2019-02-17: the day starts at
		// its one midnight, -03.
		{"fall back at midnight", "America/Sao_Paulo", "2019-02-16", "2019-02-16T02:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := slots.ParseDate(tt.date)
			if err != nil {
				t.Fatal(err)
			}
			loc := mustLoad(t, tt.zone)
			got := d.Start(loc)
			if want := utc(t, tt.want); !got.Equal(want) {
				t.Fatalf("Start = %s, want %s", got.UTC().Format(time.RFC3339), tt.want)
			}
			if slots.DateOf(got, loc) != d || slots.DateOf(got.Add(-time.Second), loc) == d {
				t.Errorf("%s is not where %s begins in %s", got, d, tt.zone)
			}
		})
	}
}

func TestParseClock(t *testing.T) {
	tests := []struct {
		name, in string
		want     slots.Clock
		wantErr  bool
	}{
		{name: "midnight", in: "00:00", want: 0},
		{name: "morning", in: "09:30", want: 9*60 + 30},
		{name: "last minute", in: "23:59", want: 23*60 + 59},
		{name: "end of day", in: "24:00", want: 1440},
		{name: "past end of day", in: "24:01", wantErr: true},
		{name: "hour 25", in: "25:00", wantErr: true},
		{name: "minute 60", in: "10:60", wantErr: true},
		{name: "unpadded", in: "9:30", wantErr: true},
		{name: "with seconds", in: "09:30:00", wantErr: true},
		{name: "dot", in: "09.30", wantErr: true},
		{name: "signed", in: "+9:30", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := slots.ParseClock(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseClock(%q) = %v, want error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseClock(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

// TestDateString: String writes what fmt's "%04d-%02d-%02d" writes, for
// every day of the years dates come in and for values out of their ranges.
func TestDateString(t *testing.T) {
	want := func(d slots.Date) string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }
	d := slots.Date{Year: 1999, Month: time.January, Day: 1}
	for d.Year < 2101 {
		if got := d.String(); got != want(d) {
			t.Fatalf("%#v: %q, want %q", d, got, want(d))
		}
		d = d.AddDays(1)
	}
	for _, d := range []slots.Date{{}, {Year: 9999, Month: 12, Day: 31}, {Year: 10000, Month: 1, Day: 1}, {Year: -1, Month: 1, Day: 1}, {Year: 7, Month: 100, Day: 5}, {Year: 7, Month: 1, Day: -3}} {
		if got := d.String(); got != want(d) {
			t.Errorf("%#v: %q, want %q", d, got, want(d))
		}
	}
}
