-- 5: claims on due objects move to a table of their own. A claim used to write the object's
-- row (claimed_by, claim_until): a new version of the whole row, its JSON included, for every
-- object claimed. A claim is now a small row of its own, valid for the version of the object
-- it was made on: a commit that writes the object (a new version) ends it without touching
-- it, as writing the columns did. The columns of migration 2 are no longer written.
CREATE TABLE claims (
	id      text COLLATE "C" PRIMARY KEY REFERENCES objects (id) ON DELETE CASCADE,
	owner   text NOT NULL,
	version bigint NOT NULL,
	until   timestamptz NOT NULL
);
