-- 1: objects with their events, idempotency keys, per-tenant object counts and settings.
--
-- Text that the store orders by (IDs above all: List pages by ID) is COLLATE "C", so
-- PostgreSQL orders it byte by byte as Go compares strings, whatever the database's locale.

-- An object: the columns that are looked up or compared, and its JSON (data). due is the
-- Unix nanoseconds of the object's due time (NULL when nothing is scheduled), so the
-- scheduler's queries are scans of an index; links holds the spec's string fields for
-- Filter.Link (jsonb containment on a GIN index); events is the last event number.
CREATE TABLE objects (
	id        text COLLATE "C" PRIMARY KEY,
	tenant    text COLLATE "C" NOT NULL,
	kind      text COLLATE "C" NOT NULL,
	parent_id text COLLATE "C" NOT NULL,
	state     text COLLATE "C" NOT NULL,
	version   bigint NOT NULL,
	due       bigint,
	links     jsonb NOT NULL,
	events    bigint NOT NULL,
	data      bytea NOT NULL
);
CREATE INDEX objects_tenant ON objects (tenant, id);
CREATE INDEX objects_kind ON objects (tenant, kind, id);
CREATE INDEX objects_kind_state ON objects (tenant, kind, state, id);
CREATE INDEX objects_parent ON objects (tenant, parent_id, id) WHERE parent_id <> '';
CREATE INDEX objects_due ON objects (due, id) WHERE due IS NOT NULL;
CREATE INDEX objects_links ON objects USING gin (links jsonb_path_ops);

-- Events outlive their object; an ID made again continues its numbers.
CREATE TABLE events (
	object_id text COLLATE "C" NOT NULL,
	seq       bigint NOT NULL,
	tenant    text COLLATE "C" NOT NULL,
	data      bytea NOT NULL,
	PRIMARY KEY (object_id, seq)
);

-- Keys are bytes: an HTTP header may hold bytes that are not UTF-8. created_at is Unix
-- nanoseconds by the simulator's clock.
CREATE TABLE idempotency (
	tenant     text COLLATE "C" NOT NULL,
	key        bytea NOT NULL,
	object_id  text COLLATE "C" NOT NULL,
	body_hash  text NOT NULL,
	created_at bigint NOT NULL,
	PRIMARY KEY (tenant, key)
);
CREATE INDEX idempotency_created ON idempotency (created_at);

-- How many objects each tenant holds: every commit that makes or removes objects updates
-- its tenants' rows, so quotas are exact under concurrent commits.
CREATE TABLE tenants (
	tenant  text COLLATE "C" PRIMARY KEY,
	objects bigint NOT NULL
);

-- Simulator-wide values (the clock offset), shared by every replica.
CREATE TABLE settings (
	key   text PRIMARY KEY,
	value text NOT NULL
);
