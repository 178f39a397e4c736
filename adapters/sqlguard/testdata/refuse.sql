--# Statements the SQL guard must refuse. One per entry, separated by a line
--# "-- next". The first line "-- want: <key>" names the expected reason
--# (see reasonKeys in helpers_test.go). Inputs that need bytes a text file
--# cannot hold (NUL, lone CR, invalid UTF-8) are in TestLexicalBytes.
--#
--# ---- stacked statements ----
-- want: multiple
SELECT 1; SELECT 2
-- next
-- want: multiple
select * from users; drop table users
-- next
-- want: multiple
select 1;;
-- next
-- want: multiple
;select 1
-- next
-- want: multiple
select 1; -- the rest is a comment
delete from users
-- next
-- want: multiple
select ';' ; delete from users
-- next
-- want: multiple
select "a;b" from t; update t set a = 1
-- next
-- want: multiple
select 1 /* ; */ ; truncate users
-- next
-- want: multiple
select 1 -- ;
; insert into t values (1)
-- next
-- want: multiple
select 1; /* trailing */ select 2
-- next
--# PostgreSQL with standard_conforming_strings off reads \' as a quote.
-- want: backslash
select '\'; drop table users; --'
-- next
-- want: backslash
select 'a\b' from t
-- next
-- want: backslash
select * from t where name = 'x\' or 1=1; --'
-- next
-- want: prefixed
select E'\'; drop table users; --'
-- next
-- want: prefixed
select e'\x27; drop table users; --'
-- next
-- want: dollar
select $$;$$; drop table users
-- next
-- want: dollar
select $tag$ ; drop table users; $tag$
-- next
-- want: nested_comment
select 1 /* /* */ ; drop table users; -- */
-- next
-- want: nested_comment
select 1 /* outer /* inner */ still comment for PostgreSQL */
-- next
-- want: non_ascii
select 1； drop table users
-- next
-- want: non_ascii
select 1﹔ drop table users
-- next
-- want: non_ascii
select 1⁏ drop table users
-- next
--# ---- every write form, DDL and utility statement ----
-- want: not_select
insert into t values (1)
-- next
-- want: not_select
INSERT INTO t (a, b) SELECT a, b FROM u
-- next
-- want: not_select
insert into t values (1) on conflict do nothing
-- next
-- want: not_select
insert into t values (1) returning *
-- next
-- want: not_select
update t set a = 1
-- next
-- want: not_select
update t set a = 1 where b = 2 returning a
-- next
-- want: not_select
delete from t
-- next
-- want: not_select
delete from t where id = 1 returning *
-- next
-- want: not_select
upsert into t values (1)
-- next
-- want: parse
merge into t using u on t.id = u.id when matched then delete
-- next
-- want: not_select
truncate t
-- next
-- want: not_select
truncate table t cascade
-- next
-- want: not_select
create table x (a int)
-- next
-- want: not_select
create table x as select * from t
-- next
-- want: not_select
create view v as select 1
-- next
-- want: not_select
create index i on t (a)
-- next
-- want: not_select
create sequence s
-- next
-- want: not_select
create schema s
-- next
-- want: not_select
create database d
-- next
-- want: not_select
create role r
-- next
-- want: not_select
create user u
-- next
-- want: parse
create function f() returns int as 'select 1' language sql
-- next
-- want: parse
create extension dblink
-- next
-- want: parse
create trigger tr before insert on t for each row execute function f()
-- next
-- want: not_select
drop table t
-- next
-- want: not_select
drop database d
-- next
-- want: not_select
drop view v
-- next
-- want: not_select
alter table t add column b int
-- next
-- want: not_select
alter table t rename to u
-- next
-- want: not_select
alter role r with password 'x'
-- next
-- want: not_select
grant select on t to public
-- next
-- want: not_select
revoke select on t from public
-- next
-- want: not_select
comment on table t is 'x'
-- next
-- want: not_select
set search_path = evil, public
-- next
-- want: not_select
set session characteristics as transaction read write
-- next
-- want: parse
set role admin
-- next
-- want: not_select
set transaction read write
-- next
-- want: not_select
set statement_timeout = 0
-- next
-- want: not_select
reset all
-- next
-- want: not_select
reset statement_timeout
-- next
-- want: not_select
show all
-- next
-- want: not_select
show search_path
-- next
-- want: not_select
begin
-- next
-- want: not_select
start transaction read write
-- next
-- want: not_select
commit
-- next
-- want: not_select
rollback
-- next
-- want: not_select
savepoint s
-- next
-- want: not_select
release savepoint s
-- next
-- want: not_select
prepare p as select 1
-- next
-- want: not_select
execute p
-- next
-- want: not_select
deallocate p
-- next
-- want: parse
copy t to '/tmp/out'
-- next
-- want: parse
copy t from program 'id'
-- next
-- want: parse
copy (select 1) to stdout
-- next
-- want: not_select
copy t from stdin
-- next
-- want: parse
lock table t in access exclusive mode
-- next
-- want: parse
call p()
-- next
-- want: parse
do 'begin perform pg_sleep(10); end'
-- next
-- want: dollar
do $$ begin perform pg_sleep(10); end $$
-- next
-- want: not_select
explain select 1
-- next
-- want: not_select
explain analyze select 1
-- next
-- want: not_select
explain analyze delete from t
-- next
-- want: parse
vacuum t
-- next
-- want: parse
analyze t
-- next
-- want: parse
listen c
-- next
-- want: parse
notify c, 'x'
-- next
-- want: not_select
discard all
-- next
-- want: parse
refresh materialized view v
-- next
-- want: parse
select * into x from t
-- next
-- want: parse
select a into temp x from t
-- next
-- want: parse
select a, b into unlogged new_table from t
-- next
-- want: not_select
export into csv 'nodelocal://1/x' from table t
-- next
-- want: not_select
backup database d to 'nodelocal://1/x'
-- next
-- want: not_select
cancel query '1'
-- next
-- want: not_select
set cluster setting sql.defaults.distsql = 1
-- next
--# ---- row-locking clauses, wherever they are ----
-- want: locking
select * from t for update
-- next
-- want: locking
select * from t for no key update
-- next
-- want: locking
select * from t for share
-- next
-- want: locking
select * from t for key share
-- next
-- want: locking
select * from t for update of t nowait
-- next
-- want: locking
select * from t for update skip locked
-- next
-- want: locking
select * from t order by a limit 1 for update
-- next
-- want: locking
select * from (select * from t for update) s
-- next
-- want: locking
with x as (select * from t for update) select * from x
-- next
-- want: locking
select 1 union (select a from t for share)
-- next
-- want: locking
select * from t where a in (select a from u for update)
-- next
-- want: locking
select (select a from u limit 1 for key share) from t
-- next
-- want: locking
select * from t where exists (select 1 from u for no key update)
-- next
--# ---- data-modifying statements inside WITH ----
-- want: writing_cte
with d as (delete from t returning *) select * from d
-- next
-- want: writing_cte
with u as (update t set a = 1 returning *) select count(*) from u
-- next
-- want: writing_cte
with i as (insert into t values (1) returning *) select * from i
-- next
-- want: writing_cte
with i as (upsert into t values (1) returning *) select * from i
-- next
-- want: writing_cte
with x as (select 1), d as (delete from t returning 1) select * from x
-- next
-- want: writing_cte
select * from (with d as (delete from t returning *) select * from d) s
-- next
-- want: writing_cte
select * from t where a in (with d as (delete from t returning a) select a from d)
-- next
-- want: writing_cte
with recursive d as (delete from t returning *) select * from d
-- next
-- want: cockroach_only
select * from [delete from t returning *]
-- next
-- want: cockroach_only
select * from [insert into t values (1) returning *]
-- next
-- want: cockroach_only
select * from [show tables]
-- next
--# ---- denylisted functions in every position ----
-- want: denied_function
select pg_sleep(10)
-- next
-- want: denied_function
select * from t where pg_sleep(1) is not null
-- next
-- want: denied_function
select (select pg_read_file('/etc/passwd'))
-- next
-- want: denied_function
with x as (select pg_ls_dir('.')) select * from x
-- next
-- want: denied_function
with recursive r(n) as (select 1 union all select n + 1 from r where pg_sleep(1) is null) select * from r
-- next
-- want: denied_function
select a from t order by pg_sleep(1)
-- next
-- want: denied_function
select a from t group by a, pg_cancel_backend(1)
-- next
-- want: denied_function
select a from t group by a having pg_terminate_backend(1)
-- next
-- want: denied_function
select lower(pg_read_file('/etc/passwd')) from t
-- next
-- want: denied_function
select coalesce(a, set_config('role', 'admin', false)) from t
-- next
-- want: denied_function
select * from t, lateral (select pg_sleep(1)) s
-- next
-- want: denied_function
select * from t, lateral pg_ls_dir('/') as d
-- next
-- want: denied_function
select * from pg_ls_dir('/')
-- next
-- want: denied_function
select * from rows from (generate_series(1, 2), pg_ls_dir('/'))
-- next
-- want: denied_function
select sum(a) over (order by pg_sleep(1)) from t
-- next
-- want: denied_function
select sum(a) over (partition by a, pg_sleep(1)) from t
-- next
-- want: denied_function
select sum(a) over w from t window w as (order by pg_sleep(1))
-- next
-- want: denied_function
select sum(a) over (order by b rows between pg_advisory_lock(1) preceding and current row) from t
-- next
-- want: denied_function
select count(*) filter (where pg_sleep(1) is null) from t
-- next
-- want: denied_function
select string_agg(a, ',' order by pg_sleep(0)) from t
-- next
-- want: denied_function
select case when pg_sleep(1) is null then 1 end
-- next
-- want: denied_function
select case pg_sleep(1) when null then 1 else 2 end
-- next
-- want: denied_function
select cast(pg_read_file('x') as text)
-- next
-- want: denied_function
select pg_read_file('x')::text
-- next
-- want: denied_function
select * from t join u on pg_sleep(1) is null
-- next
-- want: denied_function
values (pg_sleep(1))
-- next
-- want: denied_function
select 1 limit pg_advisory_lock(1)
-- next
-- want: denied_function
select 1 offset pg_advisory_lock(1)
-- next
-- want: denied_function
select distinct on (pg_sleep(1)) a from t
-- next
-- want: denied_function
select * from t where a in (1, pg_cancel_backend(2))
-- next
-- want: denied_function
select array[pg_sleep(1)]
-- next
-- want: denied_function
select a from t union select pg_sleep(1)
-- next
-- want: denied_function
select * from t where a = any(array[pg_sleep(1)])
-- next
-- want: denied_function
select * from t where a between pg_sleep(1) and 2
-- next
-- want: denied_function
select * from t where exists (select pg_sleep(1))
-- next
-- want: denied_function
select nullif(1, pg_sleep(1)), greatest(1, pg_sleep(1))
-- next
-- want: denied_function
select (pg_sleep(1))
-- next
-- want: denied_function
select not pg_sleep(1) is null
-- next
-- want: denied_function
select -length(pg_read_file('x'))
-- next
-- want: denied_function
select a[pg_sleep(1)] from t
-- next
-- want: denied_function
select row(pg_sleep(1))
-- next
-- want: denied_function
select extract(year from pg_sleep(1))
-- next
-- want: denied_function
select substring(pg_read_file('x') from 1 for 10)
-- next
-- want: denied_function
select pg_sleep(1) at time zone 'utc'
-- next
-- want: denied_function
select a like pg_read_file('x') escape '!' from t
-- next
-- want: denied_function
select array(select pg_sleep(1))
-- next
-- want: denied_function
select * from (values (pg_sleep(1))) v
-- next
--# Case, quoting and schema qualification do not hide a denied function.
-- want: denied_function
select PG_SLEEP(1)
-- next
-- want: denied_function
select Pg_Sleep(1)
-- next
-- want: denied_function
select "pg_sleep"(1)
-- next
-- want: denied_function
select "PG_SLEEP"(1)
-- next
-- want: denied_function
select pg_catalog.pg_sleep(1)
-- next
-- want: denied_function
select PG_CATALOG.PG_SLEEP(1)
-- next
-- want: denied_function
select "pg_catalog"."pg_sleep"(1)
-- next
-- want: denied_function
select public.pg_sleep(1)
-- next
-- want: denied_function
select pg_sleep /* comment */ (1)
-- next
-- want: denied_function
select pg_sleep
(1)
-- next
--# The denylist, name by name.
-- want: denied_function
select pg_read_binary_file('/etc/passwd')
-- next
-- want: denied_function
select pg_stat_file('/etc/passwd')
-- next
-- want: denied_function
select pg_ls_waldir()
-- next
-- want: denied_function
select pg_ls_logdir()
-- next
-- want: denied_function
select lo_import('/etc/passwd')
-- next
-- want: denied_function
select lo_export(1, '/tmp/x')
-- next
-- want: denied_function
select lo_get(1)
-- next
-- want: denied_function
select lo_from_bytea(0, 'x')
-- next
-- want: denied_function
select loread(0, 10)
-- next
-- want: denied_function
select dblink('host=evil', 'select 1')
-- next
-- want: denied_function
select dblink_exec('host=evil', 'drop table t')
-- next
-- want: denied_function
select dblink_connect('host=evil')
-- next
-- want: denied_function
select query_to_xml('select * from secrets', true, false, '')
-- next
-- want: denied_function
select query_to_xml_and_xmlschema('select 1', true, false, '')
-- next
-- want: denied_function
select table_to_xml('secrets', true, false, '')
-- next
-- want: denied_function
select cursor_to_xml('c', 1, true, false, '')
-- next
-- want: denied_function
select database_to_xml(true, false, '')
-- next
-- want: denied_function
select schema_to_xml('public', true, false, '')
-- next
-- want: denied_function
select ts_stat('select body from secrets')
-- next
-- want: denied_function
select pg_terminate_backend(1)
-- next
-- want: denied_function
select pg_cancel_backend(1)
-- next
-- want: denied_function
select pg_sleep_for('1 hour')
-- next
-- want: denied_function
select pg_sleep_until('tomorrow')
-- next
-- want: denied_function
select set_config('log_statement', 'none', false)
-- next
-- want: denied_function
select current_setting('data_directory')
-- next
-- want: denied_function
select pg_reload_conf()
-- next
-- want: denied_function
select pg_rotate_logfile()
-- next
-- want: denied_function
select pg_promote()
-- next
-- want: denied_function
select pg_create_physical_replication_slot('s')
-- next
-- want: denied_function
select pg_create_logical_replication_slot('s', 'pgoutput')
-- next
-- want: denied_function
select pg_drop_replication_slot('s')
-- next
-- want: denied_function
select pg_logical_emit_message(true, 'p', 'x')
-- next
-- want: denied_function
select pg_replication_origin_create('o')
-- next
-- want: denied_function
select pg_switch_wal()
-- next
-- want: denied_function
select pg_start_backup('x')
-- next
-- want: denied_function
select pg_backup_start('x')
-- next
-- want: denied_function
select pg_stop_backup()
-- next
-- want: denied_function
select pg_advisory_lock(1)
-- next
-- want: denied_function
select pg_advisory_xact_lock(1)
-- next
-- want: denied_function
select pg_try_advisory_lock(1)
-- next
-- want: denied_function
select nextval('s')
-- next
-- want: denied_function
select setval('s', 1)
-- next
-- want: denied_function
select currval('s')
-- next
-- want: denied_function
select txid_current()
-- next
-- want: denied_function
select pg_current_xact_id()
-- next
-- want: denied_function
select pg_notify('c', 'x')
-- next
-- want: denied_function
select pg_file_write('x', 'y', false)
-- next
-- want: denied_function
select pg_export_snapshot()
-- next
-- want: denied_function
select pg_stat_reset()
-- next
-- want: denied_function
select setseed(0.5)
-- next
--# ---- functions that are not on the allowlist ----
-- want: function
select version()
-- next
-- want: function
select current_user
-- next
-- want: function
select session_user
-- next
-- want: function
select current_schema
-- next
-- want: function
select current_database()
-- next
-- want: function
select pg_backend_pid()
-- next
-- want: function
select random()
-- next
-- want: function
select repeat('x', 1000000000)
-- next
-- want: function
select format('%s', 1)
-- next
-- want: function
select to_regclass('secrets')
-- next
-- want: function
select has_table_privilege('secrets', 'select')
-- next
-- want: function
select pg_relation_size('secrets')
-- next
-- want: function
select inet_server_addr()
-- next
-- want: function
select my_udf(1)
-- next
-- want: function
select "LOWER"(name) from t
-- next
-- want: function
select pg_catalog.version()
-- next
-- want: function
select overlay('abc' placing 'x' from 1)
-- next
-- want: function
select a from t group by rollup(a)
-- next
-- want: function
select timezone('utc', now())
-- next
-- want: function
select "extract"('year', now())
-- next
-- want: function
select collation for ('x')
-- next
-- want: function
select * from t where a = user
-- next
-- want: qualified_function
select public.lower(name) from t
-- next
-- want: qualified_function
select s.f(1)
-- next
-- want: qualified_function
select a.b.lower(1)
-- next
-- want: qualified_function
select information_schema._pg_truetypid(1, 2)
-- next
-- want: star_argument
select sum(*) from t
-- next
-- want: star_argument
select max(*) from t
-- next
-- want: function_form
select current_timestamp(3)
-- next
-- want: function_form
select extract(:field, now())
-- next
--# ---- casts outside the short list ----
-- want: cast_type
select 'pg_authid'::regclass
-- next
-- want: cast_type
select 'pg_sleep'::regproc
-- next
-- want: cast_type
select 'int4'::regtype
-- next
-- want: cast_type
select 'public'::regnamespace
-- next
-- want: cast_type
select 1::oid
-- next
-- want: cast_type
select 'x'::"char"
-- next
-- want: cast_type
select 'x'::name
-- next
-- want: cast_type
select '101'::bit(3)
-- next
-- want: cast_type
select '101'::varbit
-- next
-- want: cast_type
select '1'::interval day
-- next
-- want: cast_type
select cast('1 2' as int2vector)
-- next
--# ---- table names that authorization could misread ----
-- want: table_name
select * from "Users"
-- next
-- want: table_name
select * from "a.b"
-- next
-- want: table_name
select * from "*"
-- next
-- want: table_name
select * from "users "
-- next
-- want: table_name
select * from "ütf"
-- next
-- want: table_name
select * from db.public.users
-- next
-- want: table_name
select * from "Public".users
-- next
-- want: table_name
select * from "1users"
-- next
-- want: table_name
select * from tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt
-- next
-- want: column_ref
select a.b.c.d from t
-- next
-- want: identifier
select 1 as cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc
-- next
-- want: identifier
select "" from t
-- next
--# ---- CockroachDB-only syntax ----
-- want: cockroach_only
select * from t@primary
-- next
-- want: cockroach_only
select * from t@{FORCE_INDEX=i}
-- next
-- want: cockroach_only
select * from t as of system time '-1s'
-- next
-- want: cockroach_only
select 7 // 2
-- next
-- want: cockroach_only
select ifnull(a, b) from t
-- next
-- want: cockroach_only
select * from t order by primary key t
-- next
-- want: cockroach_only
select * from t inner hash join u on true
-- next
-- want: any_all
select * from t where a = any (1, 2)
-- next
-- want: annotation
select 1:::int
-- next
-- want: unsupported
select annotate_type(1, int)
-- next
-- want: unsupported
select if(true, 1, 2)
-- next
-- want: unsupported
select iferror(1/0, 0)
-- next
-- want: unsupported
select @1 from t
-- next
-- want: cockroach_only
select (t.*).@1 from t
-- next
-- want: unsupported
select a is of (int) from t
-- next
-- want: unsupported
select a collate "C" from t
-- next
-- want: unsupported
select (a).* from t
-- next
--# ---- lexical corners where PostgreSQL and CockroachDB disagree ----
-- want: dollar
select $$x$$
-- next
-- want: dollar
select $tag$x$tag$
-- next
-- want: dollar
select $
-- next
-- want: positional
select * from t where a = $1
-- next
-- want: positional
select $1::text
-- next
-- want: positional
select * from t where a = :a and b = $2
-- next
-- want: parse
select x from t where b = x:b
-- next
-- want: parse
select tags[1:n] from t
-- next
-- want: param_name
select :aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
-- next
-- want: unicode_escape
select U&'\0041'
-- next
-- want: unicode_escape
select u&'x'
-- next
-- want: unicode_escape
select * from U&"t"
-- next
-- want: unicode_escape
select U&'d!0061t' uescape '!'
-- next
-- want: prefixed
select E'x'
-- next
-- want: prefixed
select e'\101'
-- next
-- want: prefixed
select B'101'
-- next
-- want: prefixed
select b'abc'
-- next
-- want: prefixed
select X'ff'
-- next
-- want: prefixed
select x'ff'
-- next
-- want: prefixed
select N'national'
-- next
-- want: prefixed
select date'2024-01-02'
-- next
-- want: backslash
select 'C:\temp'
-- next
-- want: backslash
select '\\'
-- next
-- want: adjacent
select 'a'
'b'
-- next
-- want: adjacent
select 'a' 'b'
-- next
-- want: adjacent
select 'a' -- PostgreSQL joins these across the comment
'b'
-- next
-- want: adjacent
select 'a' /* c */ 'b'
-- next
-- want: nested_comment
select 1 /* /* */ */
-- next
-- want: unterminated
select 'abc
-- next
-- want: unterminated
select "abc
-- next
-- want: unterminated
select 1 /* abc
-- next
-- want: unterminated
select 'it''s
-- next
-- want: stray_comment_end
select 2 */ 1
-- next
-- want: meta
\! rm -rf /
-- next
-- want: meta
\copy t to '/tmp/x'
-- next
-- want: meta
select 1 \g
-- next
-- want: meta
\c otherdb
-- next
-- want: meta
select 1 \; select 2
-- next
-- want: bad_number
select 0x1F
-- next
-- want: bad_number
select 0o17
-- next
-- want: bad_number
select 0b101
-- next
-- want: bad_number
select 1_000
-- next
-- want: bad_number
select 123abc
-- next
-- want: bad_number
select 1e
-- next
-- want: bad_number
select 1.5x
-- next
-- want: bad_number
select 1from t
-- next
-- want: non_ascii
select café from t
-- next
-- want: non_ascii
select * from t where a = 1 ＯＲ 1=1
-- next
-- want: unbalanced
select (1
-- next
-- want: unbalanced
select 1)
-- next
-- want: unbalanced
select a[1 from t
-- next
-- want: unbalanced
select (1]
-- next
-- want: unbalanced
select a[(1]) from t
-- next
-- want: too_deep
select (((((((((((((((((((((((((((((((((1)))))))))))))))))))))))))))))))))
-- next
-- want: too_deep
select * from t where a in (select b from u where c in (select d from v where e in (select f from w where g in (select (((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))
-- next
-- want: empty

-- next
-- want: empty
   
-- next
-- want: empty
-- only a comment
-- next
-- want: empty
/* only a comment */
-- next
-- want: empty
;
-- next
--# ---- things the grammar does not take ----
-- want: parse
select from where
-- next
-- want: parse
select 1 2 3
-- next
-- want: parse
select a from t order by a using <
-- next
-- want: parse
select make_interval(days => 3)
-- next
-- want: parse
select ?
-- next
-- want: parse
select * from t tablesample system (10)
-- next
-- want: parse
select a from t group by grouping sets ((a))
-- next
-- want: parse
select percentile_cont(0.5) within group (order by a) from t
-- next
-- want: parse
with x as materialized (select 1) select * from x
-- next
-- want: from_only
select * from only t
-- next
-- want: from_only
select * from only (t)
-- next
-- want: from_only
select * from t for read only
-- next
-- want: parse
select xmlelement(name x)
