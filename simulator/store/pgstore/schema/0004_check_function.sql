-- 4: a commit's checks call lifecyclesim_check, which fails the statement (SQLSTATE LS001, the
-- reason as its message) when ok is not true: PostgreSQL then skips the rest of the commit's
-- pipeline, its COMMIT included, so a commit is one round trip.
--
-- OR REPLACE: development builds created it in migration 1, which a released migration must
-- not be edited into; a database they made has it already.
CREATE OR REPLACE FUNCTION lifecyclesim_check(ok boolean, reason text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	IF ok IS NOT TRUE THEN
		RAISE EXCEPTION USING ERRCODE = 'LS001', MESSAGE = reason;
	END IF;
	RETURN true;
END
$$;
