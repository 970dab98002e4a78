-- 2: claims on due objects, so that replicas sharing the database split the due work.
--
-- A replica's worker claims due objects (ClaimDue) before it lands them: claimed_by names
-- it, claim_until (the database's clock, so replicas' clocks need not agree) is when the
-- claim lapses if the replica dies first. A commit that writes the object clears both.
-- Neither column is indexed: a claim updates no index, so PostgreSQL can make it a HOT update.
ALTER TABLE objects ADD COLUMN claimed_by text, ADD COLUMN claim_until timestamptz;
