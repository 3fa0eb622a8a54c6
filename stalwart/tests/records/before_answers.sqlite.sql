-- A SQLite record as stalwart made it at the schema version before runs.answers and
-- sessions.title (commit d540138; added by 6365d7b, the last two entries of
-- schema.ADDED_COLUMNS before runs.framework): its DDL as that version's sqlite.ddl()
-- wrote it, and one session's rows as its SQLiteStore committed them (iterdump), the
-- session's lease given back. test_record_migration.py opens it with today's code.
CREATE TABLE IF NOT EXISTS "sessions" ("session" TEXT, "user" TEXT, "agent" TEXT, "created" REAL, "version" INTEGER, "identity" TEXT, PRIMARY KEY ("session")) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS "runs" ("run_id" TEXT, "session" TEXT, "number" INTEGER, "turn" TEXT, "state" TEXT, "steps" TEXT, "cursor" INTEGER, "question" TEXT, "failure" TEXT, "reply" TEXT, "turn_seq" INTEGER, "created" REAL, "updated" REAL, "framework" TEXT, PRIMARY KEY ("run_id")) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS "runs_session" ON "runs" ("session");
CREATE TABLE IF NOT EXISTS "calls" ("call_id" TEXT, "run_id" TEXT, "session" TEXT, "agent" TEXT, "seq" INTEGER, "step" INTEGER, "kind" TEXT, "tool" TEXT, "args" TEXT, "key" TEXT, "status" TEXT, "allowed" TEXT, "result" TEXT, "error" TEXT, "undoes" TEXT, "undone_by" TEXT, "bindings" TEXT, "created" REAL, "finished" REAL, "tries" INTEGER, "doubted" INTEGER, "undo" TEXT, PRIMARY KEY ("call_id")) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS "calls_session" ON "calls" ("session");
CREATE TABLE IF NOT EXISTS "messages" ("session" TEXT, "seq" INTEGER, "role" TEXT, "content" TEXT, "run_id" TEXT, "rewound" INTEGER, PRIMARY KEY ("session", "seq")) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS "leases" ("session" TEXT, "token" INTEGER, "holder" TEXT, "expires" REAL, "lock" TEXT, PRIMARY KEY ("session")) WITHOUT ROWID;
INSERT INTO "sessions" VALUES('s1','u-17','desk',1800000000.25,3,'id-4f1c');
INSERT INTO "runs" VALUES('s1#1','s1',1,'charge order 4411 40.00','waiting','[{"args":{"amount":40.0,"order":4411},"clause":"charge order 4411 40.00","tool":"charge_card"}]',0,'{"kind":"confirm","step":0,"tool":"charge_card"}',NULL,NULL,0,1800000000.5,1800000001.75,NULL);
INSERT INTO "calls" VALUES('c1','s1#1','s1','desk',1,0,'tool','charge_card','{"amount":40.0,"order":4411}','k-1','ran','confirmed','{"charged":"40.00"}',NULL,NULL,NULL,NULL,1800000001.0,1800000001.5,1,0,NULL);
INSERT INTO "messages" VALUES('s1',0,'user','charge order 4411 40.00','s1#1',0);
INSERT INTO "messages" VALUES('s1',1,'assistant','Charge order 4411 40.00?','s1#1',1);
INSERT INTO "leases" VALUES('s1',1,'',0.0,'file/65024/2155028/1796309105850673462');
