-- atlas:txmode none

-- Create index "barber_bookings_xid" to table: "barbers"

CREATE INDEX CONCURRENTLY IF NOT EXISTS "barber_bookings_xid" ON "barbers" ("bookings_xid");
