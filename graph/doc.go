// Package graph holds barberd's booking rules: the domain operations behind
// both the GraphQL schema (gqlgen resolvers) and the REST v1 adapter, which
// calls the same methods.
//
// # Writes
//
// Each operation owns its transaction (inTx), retried a few times when the
// database asks for it (a serialization failure, a deadlock, SQLite busy);
// one whose connection broke is not retried, since its outcome is unknown.
// Resolvers return store errors as they come; the adapters translate every
// error once, with DomainError.
//
// # No double booking
//
// All occupied time (active holds and confirmed appointments) is a row in
// reservations. A writer that books or holds a barber's time first locks the
// barber (pickBarber: SELECT ... FOR UPDATE on PostgreSQL; SQLite's write
// transactions are serial), frees the barber's expired holds, checks the
// slot against the barber's reservations and then inserts; on PostgreSQL
// the lock is a statement of its own, then the expired holds' deletion and
// the barber's day are one (store.DB.LockedSchedule), whose snapshot is
// taken once the lock is held. A hold, and a create or a reschedule
// without a hold, on PostgreSQL read the day first, unlocked, and their
// write's statement takes the lock (guardedTx, pickFree, bookFree,
// store.Guarded; a create's and a reschedule's is its event's, which
// carries the appointment or its move, store.Carry, store.RideMove): a
// reservation written over its time meanwhile makes the write fail as an
// overlap: the start is taken, or, for any barber, the write is made again
// as above. A create or a reschedule with a hold reads the hold unlocked
// (readHold) and its statement consumes it under the lock
// (store.Guard.Consuming): a hold released, expired or used meanwhile
// makes the write, which then wrote nothing, be made again the locking
// way (takeHold), which says why. Below that the
// database itself refuses an overlap (an exclusion constraint on PostgreSQL,
// a trigger on SQLite), so a race the lock missed ends as slot_unavailable.
// A reschedule does not count the appointment's own reservation as busy.
//
// # Reservations
//
// Time changes hands in one file, reservation.go: booking an appointment,
// holding a slot, moving an appointment, and freeing time (a cancel, a
// completed or no-show mark, a hold released or expired, the pruning of
// ended appointments) each write their reservation, the appointment or
// hold, and their events (the notifications the feed and webhooks read) in
// the caller's transaction. Every reservation freed passes timeFreed once,
// with the barber, the span and the cause: the one place that knows "this
// time became free". A hold used by a booking frees nothing: its time
// passes to the appointment in the same transaction.
//
// # Repeated creates
//
// A create with an external_reference its key used before returns the
// appointment created then and creates nothing. The reference is not looked
// up first (a first create, by far the most common, would pay a statement
// for it): the reference's unique index refuses a second appointment, and
// a create refused for any reason (that index, a slot taken by the first
// one, a hold it used) looks the reference up before it says why, so a
// repeat replays whatever the rest of its body says, and of two racing
// creates with one reference the second replays the first.
//
// # Caps
//
// Caps on rows of one owner (active holds per key, the catalog of an
// account, time off per barber) count under a lock of the owner's row on
// PostgreSQL (store.DB.Capped), so they are exact across replicas.
//
// # Jobs
//
// Background jobs (ExpireHolds, PruneReservations, SendReminders) run in
// every replica at once, across all accounts, in rounds of a bounded size.
// Those that change a barber's reservations work one barber per transaction
// under the barber's lock, like booking writers, so a hold expired is freed
// exactly once, by ExpireHolds (every second) or by the next booking of its
// barber that reads the barber's day under the lock (a guarded write on
// PostgreSQL reads it unlocked, and frees only the expired holds under its
// own time: store.Guarded), whichever locks the barber first. SendReminders claims its
// appointments with FOR UPDATE SKIP LOCKED on PostgreSQL and updates each
// only while reminded_at is still null, so every appointment is reminded
// exactly once; SQLite's serial write transactions make the same re-check
// enough.
//
// # Caches
//
// The caches of keys, catalog (what a request names, cachedCatalog, and
// the v1 catalog lists, cachedList) and availability (cache.go) are
// checked against change versions through package fresh, whose doc
// states the protocol. An appointment's view takes its unit, service and
// barber from the catalog cache when it holds them (cachedEdges).
package graph
