-- Modify "api_keys" table

ALTER TABLE "api_keys" ADD COLUMN "max_active_holds" bigint NULL;
