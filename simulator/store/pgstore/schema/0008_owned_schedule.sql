-- 8: each replica keeps the due work it starts; the shared schedule table goes.
--
-- An object's due time and its owner (the replica whose commit set that due time) are columns
-- of its row again, in no index: accepting an action and landing it still rewrite the row in
-- place (a HOT update), and no longer insert, claim and delete a schedule row as well. A
-- replica keeps the objects it owns in memory and lands them itself (ClaimDue); the objects of
-- a replica whose lease (replicas) lapsed, and those no live replica owns (as this migration
-- leaves them), are taken over by a scan of the table, which a replica runs when it starts,
-- when it finds a lease lapsed, and every 30 s.
ALTER TABLE objects ADD COLUMN due bigint, ADD COLUMN owner text COLLATE "C";
COMMENT ON COLUMN objects.due IS 'when the worker must next look at the object (unix nanoseconds), NULL when never';
COMMENT ON COLUMN objects.owner IS 'the replica that set the due time and lands it (replicas.name), NULL when no live one does';
UPDATE objects o SET due = s.due FROM schedule s WHERE s.id = o.id;
DROP TABLE schedule;
-- A replica's lease: renewed by its worker while it runs; once until has passed, the other
-- replicas take over the objects it owns.
CREATE TABLE replicas (
	name  text COLLATE "C" PRIMARY KEY,
	until timestamptz NOT NULL
);
