-- Add column "max_active_holds" to table: "api_keys"

ALTER TABLE `api_keys` ADD COLUMN `max_active_holds` integer NULL;
