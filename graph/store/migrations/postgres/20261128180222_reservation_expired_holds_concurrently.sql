-- atlas:txmode none

-- Create index "reservation_barber_id_expires_at" to table: "reservations"

CREATE INDEX CONCURRENTLY IF NOT EXISTS "reservation_barber_id_expires_at" ON "reservations" ("barber_id", "expires_at") WHERE expires_at IS NOT NULL;
