package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/fresh"
	"barberd/graph/slots"
)

// GET /availability is the endpoint chatbots call most, so it has a path of
// its own: the query is read without building a map, and answers are put
// together from the day's JSON encoded once for every barber (encodedDay),
// kept while the day's tag stays the same.

// availabilityQuery is what GET /availability asks for.
type availabilityQuery struct {
	unitID, serviceID, date string
	barberID                *string
}

// parseAvailabilityQuery reads the query as url.Values.Get would (the first
// value of each parameter), without building the map. Values are kept as
// sent: the resolver refuses those that are not text (a NUL, invalid
// UTF-8), naming them, as it checks every field of the query.
func parseAvailabilityQuery(raw string) availabilityQuery {
	var q availabilityQuery
	var seen [4]bool
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			continue // url.ParseQuery drops such a pair, and so every pair below
		}
		k, v, _ := strings.Cut(pair, "=")
		var err error
		if strings.ContainsAny(k, "%+") {
			if k, err = url.QueryUnescape(k); err != nil {
				continue
			}
		}
		i := paramIndex(k)
		if i < 0 || seen[i] {
			continue
		}
		if strings.ContainsAny(v, "%+") {
			if v, err = url.QueryUnescape(v); err != nil {
				continue
			}
		}
		seen[i] = true
		switch i {
		case 0:
			q.unitID = v
		case 1:
			q.serviceID = v
		case 2:
			q.barberID = &v
		case 3:
			q.date = v
		}
	}
	return q
}

// paramIndex is the index of an availability parameter, or -1.
func paramIndex(k string) int {
	switch k {
	case "unit_id":
		return 0
	case "service_id":
		return 1
	case "barber_id":
		return 2
	case "date":
		return 3
	}
	return -1
}

func (a *api) availability(w http.ResponseWriter, r *http.Request) {
	q := parseAvailabilityQuery(r.URL.RawQuery)
	day, err := a.res.AvailabilityDay(r.Context(), q.unitID, q.serviceID, q.barberID, q.date)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	buf := answers.Get().(*[]byte)
	body := a.encoded(dayKey{q.unitID, q.serviceID, q.date}, day).answer((*buf)[:0], q.barberID, day.Reason(q.barberID))
	writeEncoded(w, http.StatusOK, body)
	*buf = body
	answers.Put(buf)
}

// answers are buffers for availability answers, which run to 80 kB.
var answers = sync.Pool{New: func() any { return new([]byte) }}

// dayKey names the day of an availability query: every barber's.
type dayKey struct{ unitID, serviceID, date string }

// taggedDay is a day as encoded, and the tag of the graph.Day it encodes.
type taggedDay struct {
	tag uint64
	day *encodedDay
}

// newEncodedDays makes the memo of encoded days, one per day, with the
// budget of the resolver's availability cache. An encoded day takes about
// twice the memory of graph's, so graph keeps more days than the memo; a
// day the memo lost is encoded again from graph's, without the database.
func newEncodedDays(res *graph.Resolver) *fresh.Memo[dayKey, taggedDay] {
	return fresh.NewMemo[dayKey](res.Settings().AvailabilityCacheBytes, func(d taggedDay) int { return 64 + d.day.Size() })
}

// encoded is the day k encoded: as kept while its tag is the same, or
// made now.
func (a *api) encoded(k dayKey, day *graph.Day) *encodedDay {
	if day.Tag == 0 {
		return prepareDay(day)
	}
	if d, ok := a.days.Get(k); ok && d.tag == day.Tag {
		return d.day
	}
	d := prepareDay(day)
	a.days.Put(k, taggedDay{day.Tag, d})
	return d
}

// encodedDay is a day's availability for every eligible barber, kept as the
// parts of its JSON that answers are put together from. Barbers mostly share
// their slots' times, so each slot is a pair of indexes into the encoded
// times and barbers: a dozen barbers' day takes about a fifth of the memory
// of its answer, and a one-barber answer needs no day of its own.
type encodedDay struct {
	head     []byte   // `{"unit_id":…,"barber_id":`
	body     []byte   // `,"date":…,"slots":[`
	tail     []byte   // `],"reason":`
	end      []byte   // `}` and a newline
	times    [][]byte // `{"starts_at":…,"barber_id":`, once per distinct time
	barbers  []string // the barbers with slots, and
	encoded  [][]byte // theirs: `"brb_…"}`
	slots    []daySlot
	times1   [][]uint16 // each barber's slots' times, in order
	fullSize int        // of the every-barber answer
}

type daySlot struct{ time, barber uint16 }

// prepareDay encodes a day for every barber. The answer's frame is cut
// from what encodeJSON makes of the same values, and each slot is written
// in the layout slotJSON cut from it, so an answer is byte for byte what
// encodeJSON(AvailabilityOf(day.Availability(barberID))) would be. Each
// distinct time is formatted once (slots are sorted by time), and no slot
// is made a value of its own.
func prepareDay(day *graph.Day) *encodedDay {
	of := day.Of()
	empty := encodeJSON(Availability{UnitID: of.UnitID, ServiceID: of.ServiceID, Date: day.Date(), Timezone: of.Timezone, Slots: []Slot{}})
	// {…,"barber_id":null,…,"slots":[],"reason":null}\n
	const null = `"barber_id":null`
	i := bytes.Index(empty, []byte(null)) + len(null)
	j := bytes.LastIndexByte(empty, '[') + 1
	k := bytes.LastIndexByte(empty, ':') + 1
	barbers := day.Barbers()
	d := &encodedDay{
		head:    empty[:i-len("null")],
		body:    empty[i:j],
		tail:    empty[j:k],
		end:     empty[k+len("null"):],
		barbers: barbers,
		encoded: make([][]byte, len(barbers)),
		times1:  make([][]uint16, len(barbers)),
	}
	for bi, b := range barbers {
		id, _ := json.Marshal(b) // strings always marshal
		d.encoded[bi] = append(id, '}')
	}
	// Sized first: a day's slots run to hundreds, its distinct times to dozens.
	n, distinct := 0, 0
	perBarber := make([]int, len(barbers))
	last := int64(-1)
	for start, bi := range day.Slots() {
		if start != last || n == 0 {
			last, distinct = start, distinct+1
		}
		n++
		perBarber[bi]++
	}
	d.slots = make([]daySlot, 0, n)
	each := make([]uint16, n) // the barbers' times1, one after another
	for bi, c := range perBarber {
		d.times1[bi], each = each[:0:c], each[c:]
	}
	buf := make([]byte, 0, distinct*slotTimesSize) // every time's encoding, one after another
	d.times = make([][]byte, 0, distinct)
	for start, bi := range day.Slots() {
		if len(d.times) == 0 || start != last {
			last = start
			at := time.Unix(0, start)
			from := len(buf)
			buf = appendSlotTimes(buf, at, at.Add(of.Duration), of.Location)
			d.times = append(d.times, buf[from:len(buf):len(buf)])
		}
		ti := uint16(len(d.times) - 1)
		d.slots = append(d.slots, daySlot{ti, uint16(bi)})
		d.times1[bi] = append(d.times1[bi], ti)
	}
	for _, s := range d.slots {
		d.fullSize += len(d.times[s.time]) + len(d.encoded[s.barber]) + 1
	}
	d.fullSize += len(d.head) + len("null") + len(d.body) + len(d.tail) + len(`"fully_booked"`) + len(d.end)
	return d
}

// slotJSON is the layout of a slot as encodeJSON writes it: the parts
// before each of its five fields' values, in order (starts_at, ends_at,
// starts_at_utc, ends_at_utc, barber_id), cut from an empty slot.
var slotJSON = func() [5][]byte {
	parts := bytes.Split(encodeJSON(Slot{}), []byte(`""`))
	return [5][]byte(parts[:5])
}()

// slotTimesSize is about what appendSlotTimes appends.
var slotTimesSize = func() int {
	n := 2*len("2006-01-02T15:04:05") + 2*len("2006-01-02T15:04:05Z") + 4*len(`""`)
	for _, p := range slotJSON {
		n += len(p)
	}
	return n
}()

// appendSlotTimes appends a slot's encoding up to its barber:
// `{"starts_at":"…","ends_at":"…","starts_at_utc":"…","ends_at_utc":"…","barber_id":`,
// the times formatted as slots.Local and slots.UTC format them.
func appendSlotTimes(dst []byte, start, end time.Time, loc *time.Location) []byte {
	for i, t := range [4]time.Time{start, end, start, end} {
		dst = append(append(dst, slotJSON[i]...), '"')
		if i < 2 {
			dst = slots.AppendLocal(dst, t, loc)
		} else {
			dst = slots.AppendUTC(dst, t)
		}
		dst = append(dst, '"')
	}
	return append(dst, slotJSON[4]...)
}

// Size is about what d costs to keep, in bytes.
func (d *encodedDay) Size() int {
	n := len(d.head) + len(d.body) + len(d.tail) + len(d.end) + 4*cap(d.slots) + 16*len(d.barbers)
	for _, ts := range d.times1 {
		n += 24 + 2*cap(ts)
	}
	for _, t := range d.times {
		n += 24 + len(t)
	}
	for i, b := range d.encoded {
		n += 24 + len(b) + len(d.barbers[i])
	}
	return n
}

// only is the index in d.barbers of barberID: -1 for every barber (nil),
// len(d.barbers) for a barber without slots.
func (d *encodedDay) only(barberID *string) int {
	if barberID == nil {
		return -1
	}
	for i, b := range d.barbers {
		if b == *barberID {
			return i
		}
	}
	return len(d.barbers)
}

// answer appends the answer for every barber (barberID nil) or one, with
// its reason (graph.Day.Reason: one of the fixed names, or "" for null).
func (d *encodedDay) answer(dst []byte, barberID *string, reason string) []byte {
	only := d.only(barberID)
	if cap(dst) < d.fullSize && only < 0 {
		dst = make([]byte, 0, d.fullSize)
	}
	dst = append(dst, d.head...)
	switch {
	case barberID == nil:
		dst = append(dst, "null"...)
	case only < len(d.barbers):
		dst = append(dst, d.encoded[only][:len(d.encoded[only])-1]...) // without its }
	default:
		id, _ := json.Marshal(*barberID) // strings always marshal
		dst = append(dst, id...)
	}
	dst = append(dst, d.body...)
	dst = d.appendSlots(dst, only)
	dst = append(dst, d.tail...)
	return append(appendReason(dst, reason), d.end...)
}

// appendSlots appends the slots of every barber (only -1) or of
// d.barbers[only], comma separated.
func (d *encodedDay) appendSlots(dst []byte, only int) []byte {
	switch {
	case only < 0:
		for i, s := range d.slots {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, d.times[s.time]...)
			dst = append(dst, d.encoded[s.barber]...)
		}
	case only < len(d.barbers):
		for i, t := range d.times1[only] {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, d.times[t]...)
			dst = append(dst, d.encoded[only]...)
		}
	}
	return dst
}

// appendReason appends a reason as JSON: one of the fixed names, or null
// for "".
func appendReason(dst []byte, reason string) []byte {
	if reason == "" {
		return append(dst, "null"...)
	}
	return append(append(append(dst, '"'), reason...), '"')
}

// GET /availability/range is put together from the same encoded days as
// GET /availability: each day of the range is its single-day answer's
// date, slots and reason.
func (a *api) availabilityRange(w http.ResponseWriter, r *http.Request) {
	f := queryFields(r)
	unitID, serviceID, barberID := f.text("unit_id"), f.text("service_id"), f.str("barber_id")
	from, to := f.text("from"), f.text("to")
	if err := f.check(domain.CheckAvailabilityRange(unitID, serviceID, barberID, from, to)); err != nil {
		WriteError(w, r, err)
		return
	}
	days, err := a.res.AvailabilityRange(r.Context(), unitID, serviceID, barberID, from, to)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	head := encodeJSON(AvailabilityRange{
		UnitID: unitID, ServiceID: serviceID, BarberID: barberID,
		Timezone: days[0].Timezone(), From: from, To: to, Days: []AvailabilityDay{},
	}) // {…,"days":[]}\n
	end := len(head) - len("]}\n")
	buf := answers.Get().(*[]byte)
	body := append((*buf)[:0], head[:end]...)
	// A month of a large unit's days runs to megabytes: past rangeChunk the
	// answer is sent as it is made, so it never sits whole in memory.
	streaming := false
	for i, day := range days {
		if err := r.Context().Err(); err != nil { // the caller left, or its time ran out
			if !streaming {
				WriteError(w, r, domain.DomainError(err))
			}
			return
		}
		if len(body) >= rangeChunk {
			if !streaming {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				streaming = true
			}
			_, _ = w.Write(body)
			body = body[:0]
		}
		if i > 0 {
			body = append(body, ',')
		}
		d := a.encoded(dayKey{unitID, serviceID, day.Date()}, day)
		body = append(body, `{"date":"`...)
		body = append(body, day.Date()...)
		body = append(body, `","slots":[`...)
		body = d.appendSlots(body, d.only(barberID))
		body = append(body, `],"reason":`...)
		body = append(appendReason(body, day.Reason(barberID)), '}')
	}
	body = append(body, head[end:]...)
	if streaming {
		_, _ = w.Write(body)
	} else {
		writeEncoded(w, http.StatusOK, body)
	}
	*buf = body
	answers.Put(buf)
}

// rangeChunk is the most of a range answer kept before it is sent.
const rangeChunk = 256 << 10

// GET /availability/next.
func (a *api) availabilityNext(w http.ResponseWriter, r *http.Request) {
	f := queryFields(r)
	q := domain.NextSlotsQuery{
		UnitID: f.text("unit_id"), ServiceID: f.text("service_id"), BarberID: f.str("barber_id"),
		After: f.str("after"), Limit: f.integer("limit"),
		TimeFrom: f.str("time_from"), TimeTo: f.str("time_to"),
	}
	if v := f.str("weekdays"); v != nil {
		var ok bool
		if q.Weekdays, ok = parseWeekdays(*v); !ok {
			f.problems.Add("weekdays", "must be ISO weekdays, 1 (Monday) to 7 (Sunday), comma separated")
		}
	}
	if err := f.check(domain.CheckNextSlots(q)); err != nil {
		WriteError(w, r, err)
		return
	}
	next, err := a.res.NextFreeSlots(r.Context(), q)
	respond(w, r, http.StatusOK, next, err, NextSlotsOf)
}

// parseWeekdays reads a comma-separated list of ISO weekdays ("4,5"), as
// the query gives it; false when an item is not an integer (graph checks
// that each is a weekday).
func parseWeekdays(v string) ([]int, bool) {
	var out []int
	for item := range strings.SplitSeq(v, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(item))
		if err != nil {
			return nil, false
		}
		out = append(out, d)
	}
	return out, true
}
