"""What counts as destroying data in SQL, Mongo shell code, ORM calls and Redis words
(zen/guard/scan/sql.py), and how a database client's command line is judged with it."""

from __future__ import annotations

import pytest

from tests.guard.test_corpus import ENV, WT
from zen.guard.api import Context, ToolCall
from zen.guard.decide import decide
from zen.guard.scan.sql import (
    destructive_mongo,
    destructive_orm,
    destructive_redis,
    destructive_sql,
    split_sql,
)


def ctx(level: str = "act-and-report") -> Context:
    return Context(cwd=WT, worktree=WT, home="/z/home", user_home="/u", level=level, domain="code",
                   job_id="J", env=ENV)


# -- split_sql --------------------------------------------------------------------------------
@pytest.mark.parametrize("text,parts", [
    ("", []),
    ("   ;  ; ", []),
    ("SELECT 1", ["SELECT 1"]),
    ("SELECT 1; SELECT 2;", ["SELECT 1", "SELECT 2"]),
    ("SELECT ';' ; DROP TABLE t", ["SELECT ';'", "DROP TABLE t"]),
    ('SELECT "a;b" FROM t', ['SELECT "a;b" FROM t']),
    ("SELECT `x;y`; SELECT 2", ["SELECT `x;y`", "SELECT 2"]),
    ("INSERT INTO t VALUES ('it''s; fine')", ["INSERT INTO t VALUES ('it''s; fine')"]),
])
def test_split_sql_splits_on_semicolons_outside_quotes(text: str, parts: list[str]) -> None:
    assert split_sql(text) == parts


def test_split_sql_of_an_unterminated_quote_keeps_the_rest_as_one_statement() -> None:
    assert split_sql("SELECT 'a; DROP TABLE t") == ["SELECT 'a; DROP TABLE t"]


# -- destructive_sql: what is flagged and what it is called -------------------------------------
@pytest.mark.parametrize("text,found", [
    ("DROP TABLE users", "DROP TABLE users"),
    ("drop table if exists users", "drop table if"),
    ("DROP DATABASE prod;", "DROP DATABASE prod"),
    ("TRUNCATE TABLE logs", "TRUNCATE TABLE logs"),
    ("truncate logs", "truncate logs"),
    ("ALTER TABLE users DROP COLUMN email", "ALTER TABLE users ... DROP"),
    ("DELETE FROM users", "DELETE without an effective WHERE (DELETE FROM users)"),
    ("UPDATE users SET admin = true", "UPDATE without an effective WHERE (UPDATE users SET admin)"),
    ("FLUSHALL", "FLUSHALL"),
])
def test_destructive_statements_are_named(text: str, found: str) -> None:
    assert destructive_sql(text) == found


@pytest.mark.parametrize("where", [
    "1", "true", "TRUE", "not false", "1=1", "2 = 2", "id = id", "'a' = 'a'", "1 <> 0", "0 != 1",
    "id is not null", "(1=1)", "1=1 or id = 4", "1 limit 10", "x is null or x is not null",
])
def test_a_where_that_is_always_true_does_not_scope_a_delete(where: str) -> None:
    found = destructive_sql(f"DELETE FROM users WHERE {where}")
    assert found is not None and found.startswith("DELETE without an effective WHERE"), where


@pytest.mark.parametrize("text", [
    "SELECT * FROM users",
    "DELETE FROM users WHERE id = 4",
    "UPDATE users SET name = 'x' WHERE id = 4",
    "DELETE FROM sessions WHERE expires < now()",
    "INSERT INTO t VALUES (1)",
    "ALTER TABLE users ADD COLUMN email text",
    "CREATE TABLE t (id int)",
    "SELECT 'DROP TABLE users'",          # a string literal that says DROP is data, not a statement
    "-- DROP TABLE users\nSELECT 1",      # a comment
    "/* TRUNCATE logs */ SELECT 1",
    "SELECT 1 # DROP TABLE users",        # MySQL's # comment
    "",
])
def test_scoped_and_read_only_statements_pass(text: str) -> None:
    assert destructive_sql(text) is None, text


@pytest.mark.parametrize("text,prefix", [
    ("SELECT 1; DROP TABLE t", "DROP TABLE t"),
    ("WITH gone AS (SELECT id FROM t) DELETE FROM t", "DELETE without"),
    ("DO $$ BEGIN DROP TABLE t; END $$", "DROP TABLE t"),
    ("DO $body$ BEGIN TRUNCATE t; END $body$", "TRUNCATE t"),
    ("CREATE FUNCTION f() RETURNS void AS $$ DELETE FROM t $$ LANGUAGE sql", "DELETE without"),
    ("DO $$ BEGIN EXECUTE 'DROP TABLE ' || 't'; END $$", "DROP TABLE"),
    ("EXECUTE format('DROP TABLE %I', 't')", "DROP TABLE %I"),
    ("BEGIN DELETE FROM t; END", "DELETE without"),
    ("IF x THEN UPDATE t SET a = 1; END IF", "UPDATE without"),
    ("SELECT * FROM (DELETE FROM t RETURNING *) AS d", "DELETE without"),
])
def test_statements_hidden_in_structure_are_found(text: str, prefix: str) -> None:
    found = destructive_sql(text)
    assert found is not None and found.startswith(prefix), (text, found)


def test_a_where_inside_a_nested_delete_scopes_it() -> None:
    assert destructive_sql("SELECT * FROM (DELETE FROM t WHERE id = 3 RETURNING *) AS d") is None


def test_the_first_destructive_statement_is_the_one_named() -> None:
    assert destructive_sql("TRUNCATE a; DROP TABLE b") == "TRUNCATE a"


def test_deeply_nested_dollar_quotes_do_not_recurse_forever() -> None:
    text = "DROP TABLE t"
    for i in range(10):
        text = f"DO $q{i}$ {text} $q{i}$"
    assert destructive_sql(text) is not None   # a DROP below the depth it reads is still denied


def test_a_huge_script_is_judged_quickly() -> None:
    text = "INSERT INTO t VALUES (1);\n" * 20000 + "DELETE FROM t"
    assert destructive_sql(text) == "DELETE without an effective WHERE (DELETE FROM t)"


# -- mongo, ORM, redis ----------------------------------------------------------------------------
@pytest.mark.parametrize("js,found", [
    ("db.dropDatabase()", ".dropDatabase("),
    ("db.users.drop()", ".drop("),
    ("db.users.deleteMany({})", ".deleteMany({})"),
    ("db.users.deleteMany( { } )", ".deleteMany( { } )"),
    ("db.users.remove()", ".remove()"),
    ("db.users.dropIndexes()", ".dropIndexes("),
    ("db.dropAllUsers()", ".dropAllUsers("),
])
def test_destructive_mongo_calls(js: str, found: str) -> None:
    assert destructive_mongo(js) == found


@pytest.mark.parametrize("js", ["db.users.find({})", "db.users.deleteMany({age: {$gt: 90}})",
                                "db.users.remove({_id: 3})", "db.users.insertOne({a: 1})"])
def test_scoped_mongo_calls_pass(js: str) -> None:
    assert destructive_mongo(js) is None


@pytest.mark.parametrize("code", [
    "User.delete_all", "User.all.destroy_all", "ActiveRecord::Base.connection.drop_table(:users)",
    "User.objects.all().delete()", "call_command('flush')", "session.query(User).delete()",
    "Base.metadata.drop_all(engine)", "prisma.user.deleteMany()", "prisma.user.deleteMany({})",
    "await prisma.$executeRawUnsafe(q)", "sequelize.drop()", "sequelize.sync({ force: true })",
    "User.destroy({ truncate: true })", "db.drop_collection('users')", "client.drop_database('prod')",
])
def test_destructive_orm_calls(code: str) -> None:
    assert destructive_orm(code), code


@pytest.mark.parametrize("code", [
    "User.where(id: 3).delete_all_later", "User.objects.filter(id=3).delete()",
    "prisma.user.deleteMany({ where: { id: 3 } })", "session.query(User).filter_by(id=3).all()",
    "sequelize.sync()", "user.delete_all_sessions()",
])
def test_scoped_orm_calls_pass(code: str) -> None:
    assert destructive_orm(code) is None, code


@pytest.mark.parametrize("words,found", [(["flushall"], "FLUSHALL"), (["-n", "2", "FlushDB"], "FLUSHDB"),
                                         (["GET", "k"], None), ([], None), (["DEL", "flushall-key"], None)])
def test_destructive_redis_words(words: list[str], found: str | None) -> None:
    assert destructive_redis(words) == found


# -- through the decision: database clients -------------------------------------------------------
DENIED = [
    ("psql -c 'DROP TABLE users'", "DROP TABLE users"),
    ("psql -d app -c \"DELETE FROM users\"", "DELETE"),
    ("mysql -e 'TRUNCATE TABLE logs' app", "TRUNCATE"),
    ("sqlite3 app.db 'DROP TABLE t'", "DROP TABLE t"),
    ("echo 'DROP TABLE t;' | psql", "DROP TABLE t"),
    ("psql <<'SQL'\nDELETE FROM users;\nSQL", "DELETE"),
    ("redis-cli FLUSHALL", "FLUSHALL"),
    ("mongosh --eval 'db.dropDatabase()'", "dropDatabase"),
]


@pytest.mark.parametrize("command,fragment", DENIED, ids=[c[0][:50] for c in DENIED])
def test_a_destructive_statement_in_a_client_is_denied_and_named(policy, command: str, fragment: str) -> None:
    d = decide(ToolCall("Bash", command=command), ctx(), policy)
    assert d.decision == "deny", (command, d.as_dict())
    assert fragment in d.reason, (command, d.reason)
    assert "\n" not in d.reason


@pytest.mark.parametrize("command", [
    "psql -c 'SELECT count(*) FROM users'",
    "psql -c 'DELETE FROM users WHERE id = 4'",
    "mysql -e 'SELECT 1' app",
    "sqlite3 app.db '.tables'",
    "redis-cli GET key",
    "mongosh --eval 'db.users.find({})'",
])
def test_read_and_scoped_statements_in_a_client_are_allowed(policy, command: str) -> None:
    d = decide(ToolCall("Bash", command=command), ctx(), policy)
    assert d.decision == "allow", (command, d.as_dict())


def test_sql_nested_past_the_depth_it_reads_is_denied_in_a_client(policy) -> None:
    body = "DROP TABLE t"
    for i in range(6):
        body = f"DO $q{i}$ {body} $q{i}$"
    d = decide(ToolCall("Bash", command=f"psql -c '{body}'"), ctx(), policy)
    assert d.decision == "deny" and "nested too deeply" in d.reason, d.as_dict()


def test_four_levels_of_harmless_dollar_bodies_still_pass() -> None:
    body = "SELECT 1"
    for i in range(4):
        body = f"DO $q{i}$ {body} $q{i}$"
    assert destructive_sql(body) is None
