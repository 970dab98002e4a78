-- 7: no table changes. A commit's guard on an object it read but does not write (a machine's
-- action reading its cloudspace's state) is now a transaction-level advisory lock on the
-- object's ID, taken shared, where it was a FOR SHARE lock of the object's row; every commit
-- that updates or removes an object takes the advisory lock exclusive (pgstore's commit.go).
-- A replica of an earlier build takes neither, so its commits would not wait for this build's
-- nor this build's for its: this version makes earlier builds refuse the database (a database
-- written by a newer build is refused at start). Replicas of one database run one build.
COMMENT ON TABLE objects IS 'lifecyclesim objects. A commit that read an object without writing it holds pg_advisory_xact_lock_shared(hashtextextended(id, 0)) while it compares the object; one that updates or removes it takes pg_advisory_xact_lock on the same key first.';
