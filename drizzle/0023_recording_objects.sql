ALTER TABLE "call_recordings" ALTER COLUMN "audio" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "call_recordings" ADD COLUMN "object_key" text;--> statement-breakpoint
ALTER TABLE "call_recordings" ADD COLUMN "object_bytes" integer;--> statement-breakpoint
ALTER TABLE "call_recordings" ADD CONSTRAINT "call_recordings_audio_or_object" CHECK (("call_recordings"."audio" is null) <> ("call_recordings"."object_key" is null));