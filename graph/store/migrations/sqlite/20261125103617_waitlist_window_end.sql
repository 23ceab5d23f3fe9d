-- Add column "window_end" to table: "waitlist_entries"

ALTER TABLE `waitlist_entries` ADD COLUMN `window_end` datetime NULL;
