-- 6: what changes with every phase leaves the indexes of the objects table, so that accepting
-- an action and landing it rewrite the object's row in place (a HOT update: no new entry in
-- any of its indexes, the GIN index on links included).
--
-- An object's due time moves to schedule, a narrow row per object that has one, with the
-- claim on it (the claims table of migration 5 and the claim columns of migration 2 go): the
-- worker's claims are scans of its index on due, and a claim rewrites that small row, not a
-- row of its own with a foreign key to the object. A commit that writes the object writes its
-- schedule row too, which ends the claim (owner and until), as before.
--
-- The index on states goes: only a user's list by state used it, which now walks the tenant's
-- objects of the kind (objects_kind); the engine never lists by state.
CREATE TABLE schedule (
	id      text COLLATE "C" PRIMARY KEY,
	tenant  text COLLATE "C" NOT NULL,
	kind    text COLLATE "C" NOT NULL,
	due     bigint NOT NULL,
	owner   text,
	until   timestamptz
) WITH (fillfactor = 50); -- room for a claim to rewrite its row in place (HOT)
CREATE INDEX schedule_due ON schedule (due, id);
INSERT INTO schedule (id, tenant, kind, due) SELECT id, tenant, kind, due FROM objects WHERE due IS NOT NULL;
DROP TABLE claims;
DROP INDEX objects_kind_state;
ALTER TABLE objects DROP COLUMN due, DROP COLUMN claimed_by, DROP COLUMN claim_until;
-- Room on each page for the next version of its rows, which a HOT update needs.
ALTER TABLE objects SET (fillfactor = 80);
