package sqlguard

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

var update = flag.Bool("update", false, "rewrite testdata/allow.golden from the current output")

// vetRefused asserts that sql is refused with the reason want, and that the
// refusal is caller-safe.
func vetRefused(t *testing.T, v *Vetter, sql, want string) {
	t.Helper()
	got, err := v.Vet(sql)
	if err == nil {
		t.Fatalf("admitted, want refusal %q; output:\n%s", want, got.SQL)
	}
	r, ok := ports.AsSQLRefusal(err)
	if !ok {
		t.Fatalf("error is %T, want *ports.SQLRefusal", err)
	}
	if r.Reason != want {
		t.Fatalf("reason %q, want %q", r.Reason, want)
	}
	checkCallerSafe(t, r)
	if s := strings.TrimSpace(sql); len(s) >= 3 && strings.Contains(r.Reason, s) {
		t.Fatalf("reason %q contains the statement", r.Reason)
	}
	if !reflect.DeepEqual(got, ports.VettedQuery{}) {
		t.Fatalf("a refusal returned a non-empty query: %+v", got)
	}
}

// checkCallerSafe asserts a refusal quotes nothing: its text is one of the
// fixed reasons, so it cannot carry anything from the input.
func checkCallerSafe(t testing.TB, r *ports.SQLRefusal) {
	t.Helper()
	if !isKnownReason(r.Reason) {
		t.Fatalf("reason %q is not one of the fixed reasons", r.Reason)
	}
	if r.Error() != r.Reason {
		t.Fatalf("Error() %q differs from Reason", r.Error())
	}
}

func TestRefuseCorpus(t *testing.T) {
	v := New(Config{})
	entries := loadCorpus(t, "testdata/refuse.sql")
	if len(entries) < 200 {
		t.Fatalf("refuse corpus has %d entries; expected the full corpus", len(entries))
	}
	for _, e := range entries {
		t.Run(fmt.Sprintf("line%d", e.line), func(t *testing.T) {
			t.Parallel()
			want, ok := reasonKeys[e.want]
			if !ok {
				t.Fatalf("entry has no valid '-- want:' line (got %q)", e.want)
			}
			vetRefused(t, v, e.sql, want)
		})
	}
}

func TestAllowCorpus(t *testing.T) {
	v := New(Config{})
	entries := loadCorpus(t, "testdata/allow.sql")
	if len(entries) < 60 {
		t.Fatalf("allow corpus has %d entries; expected the full corpus", len(entries))
	}
	var golden strings.Builder
	for _, e := range entries {
		got, err := v.Vet(e.sql)
		if err != nil {
			t.Errorf("line %d refused: %v\n%s", e.line, err, e.sql)
			continue
		}
		t.Run(fmt.Sprintf("line%d", e.line), func(t *testing.T) {
			checkRoundTrip(t, got)
			checkEquivalent(t, e.sql, got)
		})
		fmt.Fprintf(&golden, "-- line %d\n%s\n-- params: %s\n-- tables: %s\n-- next\n",
			e.line, got.SQL, strings.Join(got.Params, ", "), strings.Join(got.Tables, ", "))
	}
	const path = "testdata/allow.golden"
	if *update {
		if err := os.WriteFile(path, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if golden.String() != string(want) {
		t.Errorf("output differs from %s; inspect the diff and run with -update if it is intended:\n%s",
			path, firstDiff(string(want), golden.String()))
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\nwant: %s\ngot:  %s", i+1, w, g)
		}
	}
	return ""
}

func TestOutput(t *testing.T) {
	v := New(Config{})
	tests := []struct {
		in, want string
		params   []string
	}{
		{"select id, email from users where org = :org",
			`SELECT "id", "email" FROM "users" WHERE ("org" = $1)`, []string{"org"}},
		{"select * from t where a = :org or b = :org and c = :Org",
			`SELECT * FROM "t" WHERE (("a" = $1) OR (("b" = $1) AND ("c" = $2)))`, []string{"org", "Org"}},
		{"select :id::int, a::text, a :: int from t",
			`SELECT CAST($1 AS integer), CAST("a" AS text), CAST("a" AS integer) FROM "t"`, []string{"id"}},
		{"select ':org', \":org\", 1 -- :org\nfrom t /* :org */",
			`SELECT ':org', ":org", 1 FROM "t"`, nil},
		{"SELECT 1 - -1, a - - b, - (a + b) FROM t",
			`SELECT (1 - (-1)), ("a" - (-"b")), (-("a" + "b")) FROM "t"`, nil},
		{"select a from t where x and y and z or w",
			`SELECT "a" FROM "t" WHERE (("x" AND "y" AND "z") OR "w")`, nil},
		{"select current_date, now() - interval '7 days', extract(year from d), d at time zone 'UTC' from t",
			`SELECT CURRENT_DATE, (pg_catalog.now() - CAST('7 days' AS interval)), EXTRACT('year' FROM "d"), ("d" AT TIME ZONE 'UTC') FROM "t"`, nil},
		{"select position('b' in s), trim(both 'x' from s), substring(s from 2 for 3) from t",
			`SELECT POSITION('b' IN "s"), pg_catalog.btrim("s", 'x'), pg_catalog.substring("s", 2, 3) FROM "t"`, nil},
		{"select a is null, a is not null, a is true, a is not false from t",
			`SELECT ("a" IS NULL), ("a" IS NOT NULL), ("a" IS TRUE), ("a" IS NOT FALSE) FROM "t"`, nil},
		// ANY ((SELECT ...)) is the subquery form in both grammars.
		{"select x = any(array[1, 2]), x = any((select y from u)), x = any(array(select y from u)) from t",
			`SELECT ("x" = ANY (ARRAY[1, 2])), ("x" = ANY (SELECT "y" FROM "u")), ("x" = ANY (ARRAY(SELECT "y" FROM "u"))) FROM "t"`, nil},
		{"table t",
			`SELECT * FROM "t"`, nil},
		{"select x from t;",
			`SELECT "x" FROM "t"`, nil},
		{"select x from t where a=:a and b=-:b",
			`SELECT "x" FROM "t" WHERE (("a" = $1) AND ("b" = (-$2)))`, []string{"a", "b"}},
	}
	for _, tt := range tests {
		got, err := v.Vet(tt.in)
		if err != nil {
			t.Errorf("%q refused: %v", tt.in, err)
			continue
		}
		if got.SQL != tt.want {
			t.Errorf("%q:\ngot:  %s\nwant: %s", tt.in, got.SQL, tt.want)
		}
		if !reflect.DeepEqual(got.Params, tt.params) {
			t.Errorf("%q: params %q, want %q", tt.in, got.Params, tt.params)
		}
	}
}

func TestTables(t *testing.T) {
	v := New(Config{})
	tests := []struct {
		in   string
		want []string
	}{
		{"select 1", nil},
		{"select now(), 1 + 1", nil},
		{"select * from generate_series(1, 3)", nil},
		{"select * from users", []string{"users"}},
		{"SELECT * FROM Users", []string{"users"}},
		{`select * from "users"`, []string{"users"}},
		{"select * from public.users u join billing.invoices i on i.user_id = u.id",
			[]string{"public.users", "billing.invoices"}},
		{"select * from a, b, a, public.a", []string{"a", "b", "public.a"}},
		{"select * from a left join (b join c on true) on true natural join d cross join e",
			[]string{"a", "b", "c", "d", "e"}},
		{"select (select max(x) from s1), exists(select 1 from s2) from t where y in (select y from s3) and z = any(select z from s4)",
			[]string{"s1", "s2", "t", "s3", "s4"}},
		{"select * from t, lateral (select * from u where u.a = t.a) l", []string{"t", "u"}},
		{"select * from (select * from (select * from deep) d1) d2", []string{"deep"}},
		{"select a from t1 union select a from t2 intersect select a from t3 except select a from t4",
			[]string{"t1", "t2", "t3", "t4"}},
		{"select a, row_number() over (order by (select count(*) from w)) from t", []string{"w", "t"}},
		// CTE names are not tables; the tables their bodies read are.
		{"with x as (select * from real_table) select * from x", []string{"real_table"}},
		{"with x as (select 1), y as (select * from x) select * from y, x", nil},
		{"with users as (select * from secret) select * from users", []string{"secret"}},
		// A qualified name never refers to a CTE.
		{"with users as (select 1) select * from public.users", []string{"public.users"}},
		// A plain CTE is not visible inside its own body or an earlier
		// entry: there the name is a table, as in PostgreSQL.
		{"with t as (select * from t) select * from t", []string{"t"}},
		{"with a as (select * from b), b as (select 1) select * from a, b", []string{"b"}},
		// A recursive WITH sees all its names.
		{"with recursive r(n) as (select 1 union all select n + 1 from r where n < 3) select * from r", nil},
		{"with recursive a as (select * from b), b as (select 1) select * from a", nil},
		// A CTE's scope ends with its statement.
		{"select * from (with x as (select 1) select * from x) s, x", []string{"x"}},
		{"select * from x union (with x as (select 1) select * from x)", []string{"x"}},
		{"with x as (select 1) select * from x where exists (select 1 from x, y)", []string{"y"}},
		{"table t", []string{"t"}},
		{"values (1), ((select 1 from v))", []string{"v"}},
	}
	for _, tt := range tests {
		got, err := v.Vet(tt.in)
		if err != nil {
			t.Errorf("%q refused: %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got.Tables, tt.want) {
			t.Errorf("%q: tables %q, want %q", tt.in, got.Tables, tt.want)
		}
	}
}

// TestLexicalBytes covers inputs that a text corpus file cannot hold
// faithfully: NUL, invalid UTF-8, control characters, a lone carriage return.
func TestLexicalBytes(t *testing.T) {
	v := New(Config{})
	tests := []struct {
		name, sql, want string
	}{
		{"nul", "select 1\x00", reasonEncoding},
		{"nul in string", "select 'a\x00b'", reasonEncoding},
		{"invalid utf8", "select '\xff'", reasonEncoding},
		{"overlong utf8", "select '\xc0\xbb'", reasonEncoding},
		{"vertical tab", "select\v1", reasonEncoding},
		{"escape char", "select 1\x1b", reasonEncoding},
		{"del", "select 1\x7f", reasonEncoding},
		{"lone CR ends a comment for PostgreSQL only", "select 1 --x\r; drop table t", reasonCommentEnd},
		{"lone CR at end of comment", "select 1 --x\r", reasonCommentEnd},
		{"CR in comment before semicolon", "select 1 -- \rdelete from t", reasonCommentEnd},
		{"comment after trailing semicolon", "select 1; --\r drop table t", reasonCommentEnd},
		{"adjacent strings across CR", "select 'a'\r\n'b'", reasonAdjacentStrings},
		{"fullwidth semicolon", "select 1\uff1b drop table t", reasonNonASCII},
		{"greek question mark", "select 1\u037e drop table t", reasonNonASCII},
		{"small semicolon", "select 1\ufe54 drop table t", reasonNonASCII},
		{"no-break space", "select\u00a01", reasonNonASCII},
		{"zero-width space", "select\u200b1", reasonNonASCII},
		{"fullwidth parenthesis", "select \uff081\uff09", reasonNonASCII},
		{"cyrillic a in keyword", "sel\u0435ct 1", reasonNonASCII},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { vetRefused(t, v, tt.sql, tt.want) })
	}

	// The same bytes inside quotes are fine where PostgreSQL accepts them.
	for _, ok := range []string{
		"select 'tab\there', 'cr\r\nlf'",
		"select 'caf\u00e9 \u2615', '\uff1b' from t",
		`select "na\u00efve" from t`,
		"select 1 -- comment\r\n",
		"select 1 -- caf\u00e9\n",
	} {
		got, err := v.Vet(ok)
		if err != nil {
			t.Errorf("%q refused: %v", ok, err)
			continue
		}
		checkRoundTrip(t, got)
	}
}

func TestLimits(t *testing.T) {
	v := New(Config{})

	// Length is counted in characters, as the setting says.
	pad := func(n int) string { return "select '" + strings.Repeat("x", n-len("select ''")) + "'" }
	if _, err := v.Vet(pad(DefaultMaxLength)); err != nil {
		t.Fatalf("statement of exactly the default length refused: %v", err)
	}
	vetRefused(t, v, pad(DefaultMaxLength+1), reasonTooLong)
	multibyte := "select '" + strings.Repeat("\u00e9", DefaultMaxLength-len("select ''")) + "'"
	if _, err := v.Vet(multibyte); err != nil {
		t.Fatalf("default length in two-byte characters refused: %v", err)
	}
	vetRefused(t, New(Config{MaxLength: 10}), "select 1 + 1", reasonTooLong)
	vetRefused(t, v, strings.Repeat("\u00e9", 4*DefaultMaxLength+1), reasonTooLong)

	// Depth: exactly the limit passes, one more is refused, before parsing.
	nest := func(n int) string { return "select " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }
	if _, err := v.Vet(nest(DefaultMaxDepth)); err != nil {
		t.Fatalf("nesting of exactly the default depth refused: %v", err)
	}
	vetRefused(t, v, nest(DefaultMaxDepth+1), reasonTooDeep)
	vetRefused(t, New(Config{MaxDepth: 2}), "select ((1)) + (((2)))", reasonTooDeep)
	vetRefused(t, v, "select array[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", reasonTooDeep)

	// 10,000 parentheses: refused by the depth bound, however generous
	// the length limit is, and without reaching the parser.
	big := New(Config{MaxLength: 1 << 20})
	vetRefused(t, big, nest(10000), reasonTooDeep)
	vetRefused(t, big, "select "+strings.Repeat("(", 10000), reasonTooDeep)
	vetRefused(t, big, "select "+strings.Repeat("(select ", 10000)+"1"+strings.Repeat(")", 10000), reasonTooDeep)
	// Parentheses inside a string or comment do not count.
	if _, err := big.Vet("select '" + strings.Repeat("(", 10000) + "' /* " + strings.Repeat("(", 10000) + " */"); err != nil {
		t.Fatalf("parentheses inside a string or comment counted: %v", err)
	}
	// Nesting without parentheses is bounded in the tree walk instead.
	vetRefused(t, big, "select "+strings.Repeat("not ", 5000)+"true", reasonTooDeep)
	vetRefused(t, big, "select "+strings.Repeat("- ", 5000)+"a from t", reasonTooDeep)
	vetRefused(t, big, "select "+strings.Repeat("case when true then ", 2000)+"1"+strings.Repeat(" end", 2000), reasonTooDeep)
	// ... but long flat chains are not nesting.
	chain := "select * from t where a = 0" + strings.Repeat(" and a = 0", 3000) + strings.Repeat(" or a || a || a = 'x'", 1000)
	if got, err := big.Vet(chain); err != nil {
		t.Fatalf("a long flat AND/OR chain was refused: %v", err)
	} else {
		checkRoundTrip(t, got)
	}
	union := "select 1" + strings.Repeat(" union select 1", 3000)
	if _, err := big.Vet(union); err != nil {
		t.Fatalf("a long flat UNION chain was refused: %v", err)
	}

	// Parameter names follow PostgreSQL's identifier limit.
	if _, err := v.Vet("select :" + strings.Repeat("p", 63)); err != nil {
		t.Fatalf("63-character parameter name refused: %v", err)
	}
	vetRefused(t, v, "select :"+strings.Repeat("p", 64), reasonParamName)
	// So do identifiers: PostgreSQL would truncate a longer one silently.
	if _, err := v.Vet("select * from " + strings.Repeat("t", 63)); err != nil {
		t.Fatalf("63-character table name refused: %v", err)
	}
	vetRefused(t, v, "select * from "+strings.Repeat("t", 64), reasonTableName)
	vetRefused(t, v, "select "+strings.Repeat("c", 64)+" from t", reasonIdentifier)
	vetRefused(t, v, `select 1 as "`+strings.Repeat("\u00e9", 32)+`"`, reasonIdentifier)
}

func TestNewDefaults(t *testing.T) {
	for _, cfg := range []Config{{}, {MaxLength: -1, MaxDepth: -5}} {
		v := New(cfg)
		if v.maxLength != DefaultMaxLength || v.maxDepth != DefaultMaxDepth {
			t.Errorf("New(%+v) = %d/%d, want defaults", cfg, v.maxLength, v.maxDepth)
		}
	}
	v := New(Config{MaxLength: 7, MaxDepth: 3})
	if v.maxLength != 7 || v.maxDepth != 3 {
		t.Errorf("New kept %d/%d, want 7/3", v.maxLength, v.maxDepth)
	}
}

// TestAllowlistNamesParseAsCalls proves every allowlisted name reaches the
// printer as an ordinary call (and so is printable bare), and that every
// denylisted name is refused even though none is on the allowlist.
func TestAllowlistNamesParseAsCalls(t *testing.T) {
	v := New(Config{})
	for name := range allowedFunctions {
		if deniedFunction(name) {
			t.Errorf("%s is both allowed and denied", name)
		}
		for _, form := range []string{"select %s(1)", "select pg_catalog.%s(1)"} {
			got, err := v.Vet(fmt.Sprintf(form, name))
			if err != nil {
				t.Errorf("%s: %v", fmt.Sprintf(form, name), err)
				continue
			}
			if got.SQL != "SELECT pg_catalog."+name+"(1)" {
				t.Errorf("%s printed as %s", name, got.SQL)
			}
		}
	}
	for name := range deniedExact {
		vetRefused(t, v, "select "+name+"(1)", reasonDeniedFunction)
		vetRefused(t, v, "select pg_catalog."+name+"(1)", reasonDeniedFunction)
		vetRefused(t, v, `select "`+strings.ToUpper(name)+`"(1)`, reasonDeniedFunction)
	}
	for _, prefix := range deniedPrefixes {
		vetRefused(t, v, "select "+prefix+"x(1)", reasonDeniedFunction)
	}
}

func TestConcurrentUse(t *testing.T) {
	v := New(Config{})
	queries := []string{
		"select * from a where x = :x",
		"with c as (select * from b) select * from c join d on true",
		"select pg_sleep(1)",
		"select 1; select 2",
	}
	want := make([]string, len(queries))
	for i, q := range queries {
		got, err := v.Vet(q)
		want[i] = fmt.Sprint(got, err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 200; n++ {
				i := n % len(queries)
				got, err := v.Vet(queries[i])
				if s := fmt.Sprint(got, err); s != want[i] {
					t.Errorf("concurrent result %s, want %s", s, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
