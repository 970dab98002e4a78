-- 3: what replicas share besides the objects: fault rules with their firing counts, and the
-- dashboard's sessions. (The time scale and heal limit are a settings row.)

-- A fault rule: rule is the engine's JSON of it (the store does not read it); count is how
-- many times it may fire (0: without end) and fired how many times it has, counted by one
-- UPDATE per firing so that replicas never fire a rule past its count. seq orders a tenant's
-- rules as they were added and numbers their IDs (fault-N), unique across replicas.
CREATE SEQUENCE fault_rule_seq;
CREATE TABLE fault_rules (
	seq    bigint PRIMARY KEY DEFAULT nextval('fault_rule_seq'),
	id     text COLLATE "C" NOT NULL UNIQUE,
	tenant text COLLATE "C" NOT NULL,
	rule   bytea NOT NULL,
	count  bigint NOT NULL,
	fired  bigint NOT NULL DEFAULT 0
);
ALTER SEQUENCE fault_rule_seq OWNED BY fault_rules.seq;
CREATE INDEX fault_rules_tenant ON fault_rules (tenant, seq);

-- A dashboard session, by the SHA-256 of its cookie (a reader of the table cannot sign in
-- with it). token_hash is the SHA-256 of the token it signed in with: the dashboard finds the
-- token among those it is configured with. expires is Unix nanoseconds.
CREATE TABLE dashboard_sessions (
	key        bytea PRIMARY KEY,
	tenant     bytea NOT NULL,
	token_hash bytea NOT NULL,
	csrf       text NOT NULL,
	expires    bigint NOT NULL
);
CREATE INDEX dashboard_sessions_tenant ON dashboard_sessions (tenant, expires);
