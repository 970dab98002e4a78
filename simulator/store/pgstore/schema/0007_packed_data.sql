-- 7: an object's data is written in its packed form (the store's codec.PackObject: a version
-- byte, then its name and times in binary and the rest as JSON, the row's columns left out)
-- where it was its JSON: a fraction of the bytes, encoded and decoded at a fraction of the
-- cost. Rows an earlier build wrote keep their JSON, which this build reads as it is (a JSON
-- object starts with '{', a packed one with the byte 1), until the object is next written.
-- Nothing is rewritten here; the version only makes an earlier build, which cannot read the
-- packed form, refuse the database when it opens rather than fail on its rows.
COMMENT ON COLUMN objects.data IS 'the object: its packed form (schema 7 on), or its JSON (written before)';
