-- A PostgreSQL record as stalwart made it at the schema version before runs.answers and
-- sessions.title (commit d540138; added by 6365d7b): its DDL as that version's
-- postgres.ddl() wrote it, its two functions as that version made them, and the same
-- session's rows as in before_answers.sqlite.sql, the session's lease given back.
-- test_record_migration.py opens it with today's code.
CREATE TABLE IF NOT EXISTS "sessions" ("session" text, "user" text, "agent" text, "created" double precision, "version" bigint, "identity" text, PRIMARY KEY ("session"));
CREATE TABLE IF NOT EXISTS "runs" ("run_id" text, "session" text, "number" bigint, "turn" text, "state" text, "steps" text, "cursor" bigint, "question" text, "failure" text, "reply" text, "turn_seq" bigint, "created" double precision, "updated" double precision, "framework" text, PRIMARY KEY ("run_id"));
CREATE INDEX IF NOT EXISTS "runs_session" ON "runs" ("session");
CREATE TABLE IF NOT EXISTS "calls" ("call_id" text, "run_id" text, "session" text, "agent" text, "seq" bigint, "step" bigint, "kind" text, "tool" text, "args" text, "key" text, "status" text, "allowed" text, "result" text, "error" text, "undoes" text, "undone_by" text, "bindings" text, "created" double precision, "finished" double precision, "tries" bigint, "doubted" boolean, "undo" text, PRIMARY KEY ("call_id"));
CREATE INDEX IF NOT EXISTS "calls_session" ON "calls" ("session");
CREATE TABLE IF NOT EXISTS "messages" ("session" text, "seq" bigint, "role" text, "content" text, "run_id" text, "rewound" boolean, PRIMARY KEY ("session", "seq"));
CREATE TABLE IF NOT EXISTS "leases" ("session" text, "token" bigint, "holder" text, "expires" double precision, "lock" text, PRIMARY KEY ("session"));
CREATE OR REPLACE FUNCTION "stalwart_lock_and_stamp"(wanted_key bigint, wanted_session text, wanted_wait boolean) RETURNS TABLE (got boolean, version bigint, created text, token bigint, holder text, expires double precision, lock_ended boolean) LANGUAGE plpgsql VOLATILE AS $stalwart$
#variable_conflict use_column
BEGIN
  IF wanted_wait THEN
    PERFORM pg_advisory_lock(wanted_key);
  ELSIF NOT pg_try_advisory_lock(wanted_key) THEN
    RETURN QUERY SELECT false, NULL::bigint, NULL::text, NULL::bigint, NULL::text,
      NULL::double precision, false;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, s."version", s."created"::text, l."token", l."holder", l."expires", CASE WHEN l."holder" <> '' AND l."lock" ~ '^backend/[0-9]+/' THEN EXISTS (SELECT FROM pg_stat_get_activity(split_part(l."lock", '/', 2)::int) a WHERE format('backend/%s/%s', a.pid, extract(epoch FROM a.backend_start)) = l."lock") ELSE false END FROM (SELECT 1) one LEFT JOIN "sessions" s ON s."session" = wanted_session LEFT JOIN "leases" l ON l."session" = wanted_session;
END
$stalwart$;
CREATE OR REPLACE FUNCTION "stalwart_give_back"(wanted_session text, wanted_token bigint, wanted_holder text) RETURNS void LANGUAGE plpgsql VOLATILE AS $stalwart$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  UPDATE "leases" SET "holder" = '', "expires" = 0
  WHERE "session" = wanted_session AND "token" = wanted_token
    AND "holder" = wanted_holder;
END
$stalwart$;
INSERT INTO "sessions" VALUES('s1','u-17','desk',1800000000.25,3,'id-4f1c');
INSERT INTO "runs" VALUES('s1#1','s1',1,'charge order 4411 40.00','waiting','[{"args":{"amount":40.0,"order":4411},"clause":"charge order 4411 40.00","tool":"charge_card"}]',0,'{"kind":"confirm","step":0,"tool":"charge_card"}',NULL,NULL,0,1800000000.5,1800000001.75,NULL);
INSERT INTO "calls" VALUES('c1','s1#1','s1','desk',1,0,'tool','charge_card','{"amount":40.0,"order":4411}','k-1','ran','confirmed','{"charged":"40.00"}',NULL,NULL,NULL,NULL,1800000001.0,1800000001.5,1,false,NULL);
INSERT INTO "messages" VALUES('s1',0,'user','charge order 4411 40.00','s1#1',false);
INSERT INTO "messages" VALUES('s1',1,'assistant','Charge order 4411 40.00?','s1#1',true);
INSERT INTO "leases" VALUES('s1',1,'',0,'backend/4242/1800000000.5');
