-- maxAgentTasks, reserved in one round trip: the lock is taken, the credential's open tasks counted
-- and the offered task inserted inside the server, so the per-credential lock is held for
-- microseconds instead of several client round trips (which queue setups under load). In READ
-- COMMITTED each statement of a plpgsql function takes a fresh snapshot, so the count after the
-- lock sees every reservation committed before it.
CREATE FUNCTION reserve_agent_task(
  p_call_id uuid, p_organization_id uuid, p_assistant_id uuid, p_credential_id uuid,
  p_phone_number_id uuid, p_transport jsonb, p_bridge_id text
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  cap integer;
  open_tasks integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_credential_id::text, 0));
  SELECT max_agent_tasks INTO cap FROM sip_credentials WHERE id = p_credential_id;
  IF cap IS NULL THEN
    RETURN false;
  END IF;
  SELECT count(*) INTO open_tasks FROM agent_tasks
  WHERE credential_id = p_credential_id AND status IN ('offered', 'active');
  IF open_tasks >= cap THEN
    RETURN false;
  END IF;
  INSERT INTO agent_tasks (organization_id, call_id, assistant_id, credential_id, phone_number_id, transport, status, bridge_id)
  VALUES (p_organization_id, p_call_id, p_assistant_id, p_credential_id, p_phone_number_id, p_transport, 'offered', p_bridge_id);
  RETURN true;
END
$$;
