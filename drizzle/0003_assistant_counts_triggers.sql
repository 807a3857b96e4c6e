-- assistant_counts follows assistants: one row per (organization, kind), bumped by row triggers.
CREATE FUNCTION assistant_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO assistant_counts (organization_id, kind, n) VALUES (NEW.organization_id, NEW.kind, 1)
    ON CONFLICT (organization_id, kind) DO UPDATE SET n = assistant_counts.n + 1;
  ELSE
    UPDATE assistant_counts SET n = n - 1 WHERE organization_id = OLD.organization_id AND kind = OLD.kind;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER assistants_counted AFTER INSERT OR DELETE ON assistants FOR EACH ROW EXECUTE FUNCTION assistant_counts_track();
--> statement-breakpoint
-- kind and organization never change on update, so only inserts and deletes move the counts
INSERT INTO assistant_counts (organization_id, kind, n)
SELECT organization_id, kind, count(*) FROM assistants GROUP BY organization_id, kind
ON CONFLICT (organization_id, kind) DO UPDATE SET n = EXCLUDED.n;
