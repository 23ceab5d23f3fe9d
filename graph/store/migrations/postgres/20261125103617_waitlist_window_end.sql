-- Modify "waitlist_entries" table

ALTER TABLE "waitlist_entries" ADD COLUMN "window_end" timestamptz NULL;
