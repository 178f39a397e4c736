package postgres

// The SQL guard never lets PostgreSQL see the caller's text: it sends its
// own re-serialization of the parsed tree, written from a grammar
// (CockroachDB's) that is not PostgreSQL's. This proves on a real
// PostgreSQL that ordinary queries survive that round trip: each vetted
// statement runs as the read-only role through the runner and returns the
// same columns and rows as the original text run by the superuser.

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sqlguard"
	"github.com/arrowhead-go/arrowhead/ports"
)

const roundTripSchema = `
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, email text, org text NOT NULL, created_at timestamptz NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers (id), total numeric(10, 2), status text NOT NULL,
  created_at timestamptz NOT NULL, tags text[], meta jsonb);
CREATE TABLE refunds (order_id int, amount numeric(10, 2));
CREATE TABLE nodes (id int PRIMARY KEY, parent_id int, label text);
INSERT INTO customers
  SELECT g, (ARRAY['Alice', 'bob', 'Ĉarlie', 'Dana O''Brien', 'eve'])[1 + g % 5] || ' ' || g,
         CASE WHEN g % 4 = 0 THEN NULL ELSE 'user' || g || '@example.com' END,
         CASE WHEN g % 2 = 0 THEN 'acme' ELSE 'globex' END,
         timestamptz '2024-01-01 00:00:00+00' + g * interval '3 days 5 hours'
  FROM generate_series(1, 40) g;
INSERT INTO orders
  SELECT g, 1 + g % 40, round((g * 7.31)::numeric % 250, 2), (ARRAY['paid', 'pending', 'refunded', 'paid'])[1 + g % 4],
         now() - g * interval '1 day 3 hours' - interval '30 minutes',
         CASE WHEN g % 3 = 0 THEN ARRAY['gift', 'rush'] WHEN g % 3 = 1 THEN ARRAY['bulk'] END,
         jsonb_build_object('source', (ARRAY['web', 'app', 'phone'])[1 + g % 3], 'items', g % 5)
  FROM generate_series(1, 200) g;
INSERT INTO orders VALUES (201, NULL, NULL, 'void', now() - interval '400 days', NULL, NULL);
INSERT INTO refunds SELECT id, total / 2 FROM orders WHERE status = 'refunded';
INSERT INTO nodes VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 1, 'b'), (4, 2, 'a1'), (5, 4, 'a1x'), (6, 3, 'b1')`

// roundTripCorpus are ordinary queries a caller might send. args are the
// named parameters' values; ordered marks a result whose order is defined.
var roundTripCorpus = []struct {
	name    string
	sql     string
	args    map[string]any
	ordered bool
}{
	{"join with a named parameter", `
select o.id, o.total, c.name
from orders o
join customers c on c.id = o.customer_id
where c.org = :org
order by o.created_at desc, o.id
limit 50`, map[string]any{"org": "acme"}, true},
	{"left join, group by, having, aggregate filter", `
select c.name, count(o.id) as n, sum(o.total) filter (where o.status = 'paid') as paid,
       count(*) filter (where o.status <> 'paid') as unpaid
from customers c
left join orders o on o.customer_id = c.id
group by c.name
having count(o.id) > 1
order by n desc, c.name`, nil, true},
	{"CTEs and a window function", `
with recent as (
  select customer_id, total, created_at
  from orders
  where created_at > now() - interval '30 days'
), ranked as (
  select customer_id, total,
         row_number() over (partition by customer_id order by total desc, created_at) as rn
  from recent
)
select customer_id, total from ranked where rn <= 3 order by customer_id, total desc`, nil, true},
	{"recursive CTE", `
with recursive tree(id, parent_id, depth, path) as (
  select id, parent_id, 0, label from nodes where parent_id is null
  union all
  select n.id, n.parent_id, t.depth + 1, t.path || '/' || n.label from nodes n join tree t on n.parent_id = t.id
)
select * from tree order by depth, id`, nil, true},
	{"window functions", `
select id, customer_id, total,
       rank() over w as rnk,
       dense_rank() over w as drnk,
       lag(total, 1) over w as prev,
       lead(total) over w as next,
       first_value(id) over w as first_id,
       sum(total) over (partition by customer_id order by id rows between unbounded preceding and current row) as running,
       count(*) over () as all_rows,
       ntile(3) over (order by id) as tercile
from orders
where customer_id <= 5
window w as (partition by customer_id order by total desc, id)
order by customer_id, id`, nil, true},
	{"union, union all, intersect, except", `
select id from orders where status = 'paid'
union
select order_id from refunds
except
select id from orders where total > 200
intersect
select id from orders where customer_id < 30`, nil, false},
	{"union all with parenthesized ordered branches", `
(select id, 'top' as kind from orders order by total desc nulls last, id limit 5)
union all
(select id, 'bottom' from orders where total is not null order by total asc, id limit 5)
order by kind, id`, nil, true},
	{"subqueries: scalar, IN, EXISTS, derived, correlated", `
select c.id,
       (select count(*) from orders o where o.customer_id = c.id) as n_orders,
       exists (select 1 from refunds r join orders o on o.id = r.order_id where o.customer_id = c.id) as has_refund,
       c.id in (select customer_id from orders where total > 200) as big_spender,
       big.max_total
from customers c
join (select customer_id, max(total) as max_total from orders group by customer_id) big on big.customer_id = c.id
where c.id not in (select customer_id from orders where status = 'void' and customer_id is not null)
order by c.id`, nil, true},
	{"casts", `
select id, total::text as t, cast(total as integer) as i, total::float8 as f, total::numeric(10, 1) as n1,
       created_at::date as d, '2024-01-31'::date + 1 as next_day, cast('42' as bigint) * 2 as big,
       id::text || '#' as label, (total > 100)::int as flag, :amount::numeric as amount
from orders
where id <= 10
order by id`, map[string]any{"amount": json.Number("12.50")}, true},
	{"named parameters, repeated and typed", `
select id, customer_id from orders
where (customer_id = :cid or customer_id = :cid + 1) and total >= :min::numeric and status <> :status
order by id`, map[string]any{"cid": json.Number("3"), "min": "10", "status": "void"}, true},
	{"string functions", `
select id, upper(name) as u, lower(email) as l, length(name) as len, substring(name from 1 for 3) as sub,
       position('a' in name) as pos, trim(both ' ' from '  ' || name || '  ') as trimmed,
       concat(name, '-', org) as cat, concat_ws('|', name, email, org) as ws, replace(name, ' ', '_') as repl,
       split_part(coalesce(email, 'x@y'), '@', 2) as domain, left(name, 2) as l2, right(name, 2) as r2,
       lpad(id::text, 4, '0') as padded, initcap(name) as ic, name || '!' as bang, reverse(org) as rev,
       strpos(name, 'e') as sp, regexp_replace(name, '[0-9]+', '#') as masked
from customers
order by id`, nil, true},
	{"date math", `
select id, date_trunc('month', created_at) as m, extract(year from created_at) as y,
       extract(dow from created_at) as dow, date_part('day', created_at) as dd,
       created_at + interval '1 day' as next, created_at - interval '2 hours 30 minutes' as earlier,
       to_char(created_at, 'YYYY-MM') as ym, '2024-03-01'::date - '2024-02-01'::date as feb_days,
       make_date(2024, 2, 29) as leap, justify_hours(interval '27 hours') as j
from customers
where created_at >= :since::timestamptz
order by id`, map[string]any{"since": "2024-02-01T00:00:00Z"}, true},
	{"date arithmetic against now", `
select count(*) filter (where created_at > now() - interval '7 days') as week,
       count(*) filter (where created_at > now() - interval '30 days') as month,
       count(*) filter (where created_at < current_date - 90) as old,
       count(*) filter (where age(now(), created_at) > interval '1 year') as ancient
from orders`, nil, true},
	{"LIKE and ILIKE", `
select id, name from customers
where name ilike :pat or email like '%1@example.com' or name not like 'A%' and name like '_ob%'
order by id`, map[string]any{"pat": "%ARL%"}, true},
	{"IN lists", `
select id, status from orders
where status in ('paid', 'refunded') and customer_id in (:a, :b, :c) and id not in (1, 2, 3)
order by id`, map[string]any{"a": 1, "b": json.Number("2"), "c": "3"}, true},
	{"CASE, searched and simple", `
select id,
       case when total > 100 then 'big' when total > 10 then 'mid' when total is null then 'none' else 'small' end as size,
       case status when 'paid' then 1 when 'refunded' then -1 else 0 end as sign
from orders
order by id`, nil, true},
	{"aggregates", `
select status, count(*) as n, count(distinct customer_id) as customers, avg(total) as avg_total,
       min(total) as lo, max(total) as hi, sum(total) as total, bool_and(total > 1) as all_over_one,
       string_agg(id::text, ',' order by id) filter (where id % 50 = 0) as sample,
       array_agg(id order by id desc) filter (where id < 10) as first_ids
from orders
group by status
order by status`, nil, true},
	{"DISTINCT ON", `
select distinct on (customer_id) customer_id, id, total
from orders
where customer_id is not null
order by customer_id, created_at desc, id`, nil, true},
	{"DISTINCT", `select distinct status from orders order by status`, nil, true},
	{"LIMIT and OFFSET", `select id from orders order by id limit 5 offset 10`, nil, true},
	{"LIMIT and OFFSET as parameters", `select id from orders order by id desc limit :n offset :skip`,
		map[string]any{"n": json.Number("4"), "skip": 2}, true},
	{"COALESCE, NULLIF, IS DISTINCT FROM", `
select o.id, coalesce(nullif(o.status, 'paid'), 'n/a') as s, o.total is distinct from 0 as nonzero,
       o.customer_id is null as orphan, c.email is not null as has_email
from orders o left join customers c on c.id = o.customer_id
order by o.id`, nil, true},
	{"jsonb and arrays", `
select id, meta ->> 'source' as src, (meta -> 'items')::int as items, meta as m, tags[1] as first_tag,
       array_length(tags, 1) as n_tags, 'gift' = any(tags) as is_gift, cardinality(tags) as card,
       jsonb_build_object('id', id, 'tags', tags) as doc, array_to_string(tags, '+') as joined
from orders
where meta ->> 'source' = :src
order by id
limit 20`, map[string]any{"src": "app"}, true},
	{"operator precedence", `
select id, total * 2 + 1 as a, -total as neg, total / 3 as third, mod(id, 7) as m, id % 7 as pct,
       round(total / 3, 2) as r, 2 ^ 3 as pow, 2 + 3 * 4 as prec, (2 + 3) * 4 as paren, abs(-id) as ab,
       not (status = 'paid' or total < 10) and customer_id > 5 as logic
from orders
where id <= 12
order by id`, nil, true},
	{"string literals and comparisons", `
select id, name from customers
where name <> 'Dana O''Brien 3' and name > 'B' and name between 'a' and 'zz'
order by name, id`, nil, true},
	// The parser (CockroachDB 20 grammar) takes only DESC NULLS LAST and
	// ASC NULLS FIRST; the printer writes them out, so PostgreSQL, whose
	// defaults are the opposite, sorts as the caller asked.
	{"NULLS FIRST and LAST", `
select id, customer_id, total from orders order by total desc nulls last, customer_id asc nulls first, id limit 10`, nil, true},
	{"VALUES in FROM", `
select v.id, v.label, c.name
from (values (1, 'one'), (2, 'two'), (3, 'three')) as v(id, label)
join customers c on c.id = v.id
order by v.id`, nil, true},
	{"generate_series with a parameter", `select g, g * g as sq from generate_series(1, :n) as g order by g`,
		map[string]any{"n": json.Number("5")}, true},
	{"tableless parameters", `select :p::text as echoed, :n::int + 1 as next, :b::boolean as flag`,
		map[string]any{"p": "it's ; -- fine", "n": json.Number("41"), "b": true}, true},
	{"GROUP BY ordinal and expression", `
select date_trunc('month', created_at) as month, status, count(*) as n
from orders
group by 1, status
order by 1, 2`, nil, true},
	{"self join and aliases", `
select a.id as child, b.id as parent, b.label
from nodes a left join nodes b on b.id = a.parent_id
order by a.id`, nil, true},
}

func TestIntegrationSQLGuardRoundTrip(t *testing.T) {
	db := requireDB(t)
	s := db.schema(t, roundTripSchema)
	vetted := runner(t, withParams(t, db.roDSN, "search_path", s))
	direct := runner(t, withParams(t, db.dsn, "search_path", s))
	v := sqlguard.New(sqlguard.Config{})
	lim := ports.SQLLimits{MaxRows: 10000, MaxCellBytes: 1 << 20, MaxTotalBytes: 1 << 24}

	for _, tt := range roundTripCorpus {
		t.Run(tt.name, func(t *testing.T) {
			q, err := v.Vet(tt.sql)
			if err != nil {
				t.Fatalf("the vetter refused an ordinary query: %v\n%s", err, tt.sql)
			}
			args := make([]any, len(q.Params))
			for i, name := range q.Params {
				val, ok := tt.args[name]
				if !ok {
					t.Fatalf("no value for parameter %q", name)
				}
				args[i] = val
			}
			got, err := vetted.Query(t.Context(), q, args, lim)
			if err != nil {
				t.Fatalf("the vetted statement failed on PostgreSQL: %v (cause: %v)\nvetted: %s", err, errors.Unwrap(err), q.SQL)
			}
			orig, err := positional(tt.sql, q.Params)
			if err != nil {
				t.Fatal(err)
			}
			want, err := direct.Query(t.Context(), ports.VettedQuery{SQL: orig, Params: q.Params}, args, lim)
			if err != nil {
				t.Fatalf("the original failed on PostgreSQL: %v (cause: %v)\n%s", err, errors.Unwrap(err), orig)
			}
			if len(want.Rows) == 0 || len(want.Truncated) != 0 {
				t.Fatalf("the original returned %d rows (truncated %q): the comparison would prove nothing", len(want.Rows), want.Truncated)
			}
			if !reflect.DeepEqual(got.Columns, want.Columns) {
				t.Errorf("columns differ\nvetted:   %q\noriginal: %q\nvetted SQL: %s", got.Columns, want.Columns, q.SQL)
			}
			g, w := rowsText(t, got.Rows), rowsText(t, want.Rows)
			if !tt.ordered {
				slices.Sort(g)
				slices.Sort(w)
			}
			if !slices.Equal(g, w) {
				t.Errorf("rows differ\nvetted:   %v\noriginal: %v\nvetted SQL: %s", g, w, q.SQL)
			}
		})
	}
}

// positional rewrites the original's named parameters (:name, not the ::
// cast) into the vetter's placeholder numbering, leaving string literals,
// quoted identifiers and everything else as written.
func positional(sql string, params []string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			b.WriteString(sql[i:min(j+1, len(sql))])
			i = j
		case c == ':' && i+1 < len(sql) && sql[i+1] == ':':
			b.WriteString("::")
			i++
		case c == ':' && i+1 < len(sql) && isNameStart(sql[i+1]):
			j := i + 1
			for j < len(sql) && (isNameStart(sql[j]) || sql[j] >= '0' && sql[j] <= '9') {
				j++
			}
			k := slices.Index(params, sql[i+1:j])
			if k < 0 {
				return "", fmt.Errorf("parameter %q is not among the vetter's %q", sql[i+1:j], params)
			}
			b.WriteString("$" + strconv.Itoa(k+1))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// rowsText renders each row as JSON, for comparing and for messages.
func rowsText(t *testing.T, rows [][]json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

func TestPositional(t *testing.T) {
	got, err := positional(`select :a::int, ':b', ":c", 'it''s :d', :b, :a`, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `select $1::int, ':b', ":c", 'it''s :d', $2, $1`; got != want {
		t.Errorf("positional = %q, want %q", got, want)
	}
	if _, err := positional("select :zz", []string{"a"}); err == nil {
		t.Error("an unknown parameter was accepted")
	}
}
