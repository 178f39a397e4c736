--# Statements the SQL guard must admit. One per entry, separated by a line
--# "-- next". For each, the test checks that the output vets again to
--# itself and that it parses to the same tree as the input, and compares
--# the output with allow.golden (go test -run TestAllowCorpus -update).
-- next
select id, email from users where org = :org
-- next
SELECT id, email FROM users WHERE org = :org AND (owner = :org OR shared_with = :org)
-- next
select * from orders where id = :id::int and created_at >= :since::timestamptz
-- next
select o.id, o.total, c.name
from orders o
join customers c on c.id = o.customer_id
where o.org = :org
order by o.created_at desc
limit 50
-- next
select c.name, count(*) as n, sum(o.total) filter (where o.status = 'paid') as paid
from customers c
left join orders o on o.customer_id = c.id
group by c.name
having count(*) > 1
order by n desc, c.name
-- next
with recent as (
  select customer_id, total, created_at
  from orders
  where created_at > now() - interval '30 days'
), ranked as (
  select customer_id, total,
         row_number() over (partition by customer_id order by total desc) as rn
  from recent
)
select customer_id, total from ranked where rn <= 3
-- next
with recursive tree(id, parent_id, depth) as (
  select id, parent_id, 0 from nodes where parent_id is null
  union all
  select n.id, n.parent_id, t.depth + 1 from nodes n join tree t on n.parent_id = t.id
)
select * from tree order by depth, id
-- next
select a from t1 union select a from t2
-- next
select a from t1 union all select a from t2 union all select a from t3
-- next
select a from t1 intersect select a from t2 except select a from t3
-- next
(select a from t1 order by a limit 5) union all (select a from t2 order by a desc limit 5)
-- next
select a from t1 union (select a from t2 intersect select a from t3) order by 1
-- next
select id,
       rank() over w,
       dense_rank() over w,
       percent_rank() over w,
       cume_dist() over w,
       ntile(4) over w,
       lag(total, 1) over w,
       lead(total, 1, 0) over w,
       first_value(total) over w,
       last_value(total) over (w rows between unbounded preceding and unbounded following),
       nth_value(total, 2) over w
from orders
window w as (partition by customer_id order by created_at)
-- next
select sum(x) over (order by y rows between 2 preceding and current row) from t
-- next
select avg(x) over (order by y range between unbounded preceding and current row) from t
-- next
select count(*) over () from t
-- next
select sum(x) over (order by y rows between current row and 2 following exclude current row),
       sum(x) over (order by y range between current row and unbounded following exclude group),
       sum(x) over (order by y groups between 1 preceding and 1 following exclude no others)
from t
-- next
select * from users where id in (select user_id from memberships where org = :org)
-- next
select * from users u where exists (select 1 from logins l where l.user_id = u.id)
-- next
select * from users u where not exists (select 1 from bans b where b.user_id = u.id)
-- next
select name, (select count(*) from orders o where o.customer_id = c.id) as orders from customers c
-- next
select * from t where x = any(array[1, 2, 3]) and y <> all(select y from u) and z = some(:zs::int[])
-- next
select * from t where tag like any (array['a%', 'b%'])
-- next
select * from a left join b on a.id = b.a_id right join c on c.id = b.c_id full join d on d.id = c.d_id
-- next
select * from a cross join b
-- next
select * from (a join b on a.id = b.id)
-- next
select * from (a join b on a.id = b.id) as j, c
-- next
select * from ((a join b on true)) join ((c left join d using (id))) on true
-- next
select * from (select 1 as x) s join lateral (select s.x + 1 as y) t on true
-- next
select * from a natural join b
-- next
select * from a join b using (id, org)
-- next
select * from a inner join (b join c on b.id = c.b_id) on a.id = b.a_id
-- next
select * from users u, lateral (select * from orders o where o.user_id = u.id order by o.created_at desc limit 1) last_order
-- next
select * from users u left join lateral (select count(*) as n from orders o where o.user_id = u.id) c on true
-- next
select payload -> 'user' ->> 'email', payload #> '{a,b}', payload #>> '{a,b}' from events
-- next
select * from events where payload @> '{"type": "login"}'::jsonb and payload ? 'user' and tags <@ array['x', 'y']
-- next
select * from events where payload ?| array['a', 'b'] and payload ?& array['c'] and tags && array['z']
-- next
select jsonb_build_object('id', id, 'name', name), to_jsonb(t), jsonb_agg(x order by x) from t group by id, name, t
-- next
select e.key, e.value from events, jsonb_each(events.payload) as e
-- next
select elem from events, jsonb_array_elements_text(payload -> 'tags') as elem
-- next
select current_date, current_timestamp, localtimestamp, current_time, localtime, now()
-- next
select date_trunc('day', created_at), date_part('hour', created_at), extract(epoch from created_at), extract(year from created_at) from t
-- next
select age(now(), created_at), to_char(created_at, 'YYYY-MM-DD'), to_date('2024-01-02', 'YYYY-MM-DD'), to_timestamp(0) from t
-- next
select created_at at time zone 'UTC', created_at at time zone :tz from t
-- next
select * from t where created_at between :from and :to and d not between symmetric 1 and 2
-- next
select interval '1 day', interval '2 hours 30 minutes', interval '1 year 2 months', interval '-3 days', interval '1.5 seconds'
-- next
select date '2024-01-02', timestamp '2024-01-02 03:04:05', timestamptz '2024-01-02 03:04:05+00', time '03:04'
-- next
select make_date(2024, 1, 2), make_interval(0, 0, 0, 3)
-- next
select case when total > 100 then 'big' when total > 10 then 'medium' else 'small' end from orders
-- next
select case status when 'a' then 1 when 'b' then 2 end from orders
-- next
select coalesce(nickname, name, 'anonymous'), nullif(total, 0), greatest(a, b, c), least(a, b) from t
-- next
select lower(email), upper(name), initcap(name), length(name), char_length(name), octet_length(name) from users
-- next
select substring(name from 1 for 3), substring(name from 2), substring(name, 1, 3), substr(name, 2) from users
-- next
select position('@' in email), strpos(email, '@'), split_part(email, '@', 2), left(name, 1), right(name, 2) from users
-- next
select trim(name), trim(both ' ' from name), trim(leading '0' from code), trim(trailing '.' from code), btrim(name), ltrim(name), rtrim(name) from users
-- next
select concat(first, ' ', last), concat_ws(', ', a, b), replace(name, 'a', 'b'), lpad(code, 6, '0'), rpad(code, 6), reverse(code), translate(code, 'ab', 'xy') from t
-- next
select regexp_replace(name, '[aeiou]', '', 'g'), regexp_match(name, 'x(y)'), md5(name), to_hex(42), ascii('a'), chr(65), starts_with(name, 'a') from users
-- next
select first || ' ' || last, name || :suffix from users
-- next
select * from users where name like 'a%' and name not like '%z' and email ilike '%@EXAMPLE.com' and code not ilike 'x%'
-- next
select * from users where name similar to '(a|b)%' and name not similar to 'c%'
-- next
select * from users where name ~ '^a' and name !~ 'z$' and name ~* 'A' and name !~* 'Q'
-- next
select * from users where name like 'a!%%' escape '!'
-- next
select * from t where a is null and b is not null and c is true and d is not true and e is false and f is not false and g is unknown
-- next
select * from t where a is distinct from b and c is not distinct from d
-- next
select abs(x), ceil(x), ceiling(x), floor(x), round(x), round(x, 2), trunc(x), mod(x, 3), div(x, 3), power(x, 2), sqrt(x), exp(x), ln(x), log(x), sign(x), pi() from t
-- next
select x + y - z * w / v % u, x ^ 2, -x, +x, 7 & 3, 7 | 8, 7 # 2, ~7, 1 << 4, 256 >> 2 from t
-- next
select (a + b) * c, a + (b * c), a - (b - c), (a - b) - c, a / b / c from t
-- next
select count(distinct user_id), count(all user_id), string_agg(name, ', ' order by name), array_agg(id order by id desc), bool_and(ok), bool_or(ok), every(ok) from t
-- next
select min(x), max(x), avg(x), stddev(x), variance(x), corr(x, y) from t
-- next
select distinct on (customer_id) customer_id, total from orders order by customer_id, created_at desc
-- next
select distinct status from orders
-- next
select * from orders order by total desc nulls last, id asc limit 10 offset 20
-- next
select * from orders fetch first 5 rows only
-- next
select * from orders limit all
-- next
select * from orders offset 10
-- next
values (1, 'a'), (2, 'b')
-- next
select * from (values (1, 'a'), (2, 'b')) as v(id, name)
-- next
table users
-- next
select * from public.users join billing.invoices on invoices.user_id = users.id
-- next
select users.*, u2.id from public.users, users u2
-- next
select pg_catalog.lower(name), pg_catalog.count(*) from users
-- next
select x::text, x::varchar(20), x::char(2), x::integer, x::int, x::int4, x::bigint, x::smallint, x::real, x::double precision, x::float, x::numeric, x::numeric(10, 2), x::decimal from t
-- next
select x::boolean, x::bool, x::date, x::time, x::timestamp, x::timestamptz, x::timestamp(3), x::interval, x::uuid, x::json, x::jsonb, x::bytea, x::inet from t
-- next
select x::text[], x::int[], cast(x as uuid[]), cast(x as text), x::text::int from t
-- next
select array[1, 2, 3], array[]::int[], array(select id from users), (array[1, 2])[1], tags[1], tags[2:3], tags[:2], tags[2:] from t
-- next
select array_length(tags, 1), array_position(tags, 'x'), array_to_string(tags, ','), cardinality(tags), string_to_array('a,b', ',') from t
-- next
select * from unnest(array[1, 2, 3]) with ordinality as u(x, n)
-- next
select * from generate_series(1, 10) as g(i) where i % 2 = 0
-- next
select g.d from generate_series(now() - interval '7 days', now(), interval '1 day') as g(d)
-- next
select * from rows from (generate_series(1, 3), unnest(array['a', 'b']))
-- next
select (1, 2) = (1, 2), row(1, 'a') is not null, (a, b) in (select x, y from u) from t
-- next
select 'it''s', '', ' ', ';', '--', '/*', '*/', '$$', ':org', 'U&', 'e''x''' from t
-- next
select 'line one
line two' from t
-- next
select "select", "from", "Mixed Case", "with ""quotes""", "a;b", ":name", "$1" from t
-- next
select 'café ☕ 日本', "naïve" from t
-- next
select 1 -- a comment; with a semicolon
-- next
select * from t where a = 1 -- comment at the end, no newline
-- next
select /* block ; comment */ 1 /* another */ from t -- trailing
-- next
select 1 from t;
-- next
select 1 from t; -- done
-- next
select 1 from t ; /* done */
-- next
SeLeCt Id FrOm UsErS wHeRe OrG = :org
-- next
select ((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))
-- next
select 1, 1.5, .5, 5., 1e3, 1.5E-3, 007, 99999999999999999999999999, -1, - 2.5, -(1), -(-1), - -(2), 2 - -2, -(- 3)
-- next
select true, false, null, not true
-- next
select 1 + 1
-- next
select now()
-- next
with users as (select * from accounts where active) select * from users
-- next
with a as (select 1 as x), b as (select x + 1 as x from a) select * from a, b
-- next
select * from (with inner_cte as (select id from t) select * from inner_cte) s
-- next
select * from t where a = :a and b = :b and c = :a and d = :c and e = :b
-- next
select * from t where id = :id and tags @> array[:tag]::text[] and name ilike :pattern
-- next
select * from t where coalesce(:since::date, current_date) <= d
-- next
select * from t where a = :a::text::int
-- next
select * from t where x = :x and y = :x_2 and z = :_z
-- next
select row_number() over (partition by a, b order by c desc, d) from t
-- next
select count(*) filter (where x > 0) over (partition by y) from t
-- next
select json_agg(t) from (select id, name from users order by id limit 10) t
-- next
select row_to_json(u) from users u
-- next
select jsonb_set(payload, '{a}', '1'), jsonb_strip_nulls(payload), jsonb_typeof(payload), jsonb_array_length(payload -> 'items') from events
-- next
select payload #- '{a,b}' from events
-- next
select width_bucket(x, 0, 100, 10), num_nulls(a, b), num_nonnulls(a, b) from t
-- next
select justify_days(interval '35 days'), justify_hours(interval '27 hours'), isfinite(d) from t
-- next
select x from t where x::text <> ''
-- next
with
  params as (select :org::text as org, :since::timestamptz as since),
  active as (
    select u.id, u.email, count(o.id) as orders, sum(o.total) as revenue
    from users u
    join orders o on o.user_id = u.id
    cross join params p
    where u.org = p.org and o.created_at >= p.since
    group by u.id, u.email
  )
select id, email, orders, revenue,
       rank() over (order by revenue desc) as revenue_rank,
       round(100.0 * revenue / nullif(sum(revenue) over (), 0), 2) as share
from active
where orders > 0
order by revenue_rank
limit 100
