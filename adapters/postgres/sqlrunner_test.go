package postgres

// Unit tests: no database. The same mappings and bounds run against a real
// PostgreSQL in sqlrunner_integration_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/arrowhead-go/arrowhead/ports"
)

// deadDSN returns a DSN for a loopback port nothing listens on, with a
// password that must never show up in an error.
func deadDSN(t *testing.T) string {
	t.Helper()
	return "postgresql+asyncpg://someone:hunter2@" + deadAddr(t) + "/nowhere?sslmode=disable"
}

// deadAddr returns a loopback host:port nothing listens on: connecting is
// refused at once.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestQueryRefusesBadInputBeforeConnecting(t *testing.T) {
	r := runner(t, deadDSN(t))
	lim := ports.SQLLimits{}
	tests := []struct {
		name  string
		q     ports.VettedQuery
		args  []any
		cause error
	}{
		{"empty", ports.VettedQuery{SQL: " \n\t"}, nil, ErrEmptyStatement},
		{"fewer args", ports.VettedQuery{SQL: "select $1", Params: []string{"a"}}, nil, ErrArgumentCount},
		{"more args", ports.VettedQuery{SQL: "select 1"}, []any{"x"}, ErrArgumentCount},
		{"map arg", ports.VettedQuery{SQL: "select $1", Params: []string{"a"}}, []any{map[string]any{"k": "v"}}, ErrUnsupportedArgument},
		{"slice arg", ports.VettedQuery{SQL: "select $1", Params: []string{"a"}}, []any{[]any{"v"}}, ErrUnsupportedArgument},
		{"exec mode arg", ports.VettedQuery{SQL: "select $1", Params: []string{"a"}}, []any{pgx.QueryExecModeSimpleProtocol}, ErrUnsupportedArgument},
		{"NaN arg", ports.VettedQuery{SQL: "select $1", Params: []string{"a"}}, []any{math.NaN()}, ErrUnsupportedArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Query(context.Background(), tt.q, tt.args, lim)
			se := wantSQLError(t, err, ports.SQLInvalid)
			if !errors.Is(se.Err, tt.cause) {
				t.Errorf("cause = %v, want %v", se.Err, tt.cause)
			}
		})
	}
}

func TestDatabaseDownIsUnavailable(t *testing.T) {
	dsn := deadDSN(t)
	r := runner(t, dsn)
	_, err := query(r, "select 1", ports.SQLLimits{})
	se := wantSQLError(t, err, ports.SQLUnavailable)
	var ce *pgconn.ConnectError
	if !errors.As(se.Err, &ce) {
		t.Errorf("cause %v is not the driver's connect error", se.Err)
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("error text quotes the DSN: %q", err)
	}
	if got := r.Health(context.Background()); got != ports.HealthDown {
		t.Errorf("Health = %q, want down", got)
	}

	r.pool.Close()
	_, err = query(r, "select 1", ports.SQLLimits{})
	se = wantSQLError(t, err, ports.SQLUnavailable)
	if !errors.Is(se.Err, ErrClosed) {
		t.Errorf("cause after Close = %v, want ErrClosed", se.Err)
	}
	if got := r.Health(context.Background()); got != ports.HealthDown {
		t.Errorf("Health after Close = %q, want down", got)
	}
}

func TestSessionSQL(t *testing.T) {
	const rest = " || set_config('DateStyle', 'ISO, MDY', true) || set_config('IntervalStyle', 'postgres', true) || set_config('TimeZone', 'UTC', true) || set_config('bytea_output', 'hex', true) || set_config('extra_float_digits', '1', true)"
	tests := []struct {
		lim  ports.SQLLimits
		want string
	}{
		{ports.SQLLimits{Timeout: 300 * time.Millisecond}, "'300', true) || set_config('temp_file_limit', '0', true) || set_config('work_mem', '64', true)"},
		{ports.SQLLimits{Timeout: 10 * time.Second, TempFileBytes: 64 << 20, WorkMemBytes: 16 << 20}, "'10000', true) || set_config('temp_file_limit', '65536', true) || set_config('work_mem', '16384', true)"},
		{ports.SQLLimits{Timeout: 1500 * time.Microsecond, TempFileBytes: 1, WorkMemBytes: 1 << 60}, "'1', true) || set_config('temp_file_limit', '1', true) || set_config('work_mem', '2147483647', true)"},
		// never 0, which would disable the timeout; negative limits leave
		// the role's settings alone
		{ports.SQLLimits{Timeout: time.Microsecond, TempFileBytes: -1, WorkMemBytes: -1}, "'1', true)"},
		{ports.SQLLimits{Timeout: 1000 * time.Hour, TempFileBytes: 1025, WorkMemBytes: -1}, "'2147483647', true) || set_config('temp_file_limit', '2', true)"},
	}
	for _, tt := range tests {
		if got, want := sessionSQL(tt.lim, 0), "SELECT set_config('statement_timeout', "+tt.want+rest; got != want {
			t.Errorf("sessionSQL(%+v) = %q, want %q", tt.lim, got, want)
		}
	}
	// The reported settings the session already has are left out.
	lim := ports.SQLLimits{Timeout: time.Second, TempFileBytes: -1, WorkMemBytes: -1}
	for inPlace, want := range map[reportedMask]string{
		0b111: "",
		0b101: " || set_config('IntervalStyle', 'postgres', true)",
		0b010: " || set_config('DateStyle', 'ISO, MDY', true) || set_config('TimeZone', 'UTC', true)",
	} {
		want = "SELECT set_config('statement_timeout', '1000', true)" + want +
			" || set_config('bytea_output', 'hex', true) || set_config('extra_float_digits', '1', true)"
		if got := sessionSQL(lim, inPlace); got != want {
			t.Errorf("sessionSQL(%b) = %q, want %q", inPlace, got, want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	got := withDefaults(ports.SQLLimits{MaxRows: -1})
	want := ports.SQLLimits{MaxRows: DefaultMaxRows, MaxColumns: DefaultMaxColumns, MaxCellBytes: DefaultMaxBytes, MaxTotalBytes: DefaultMaxBytes, Timeout: DefaultTimeout,
		TempFileBytes: DefaultTempFileBytes, WorkMemBytes: DefaultWorkMemBytes}
	if got != want {
		t.Errorf("withDefaults = %+v, want %+v", got, want)
	}
	set := ports.SQLLimits{MaxRows: 1, MaxColumns: 2, MaxCellBytes: 3, MaxTotalBytes: 4, Timeout: 5, TempFileBytes: -1, WorkMemBytes: 7}
	if got := withDefaults(set); got != set {
		t.Errorf("withDefaults changed set limits: %+v", got)
	}
	// The deadline adds a margin to the timeout: it must not overflow.
	if got := withDefaults(ports.SQLLimits{Timeout: math.MaxInt64}).Timeout; got != math.MaxInt32*time.Millisecond {
		t.Errorf("a huge timeout became %v, want PostgreSQL's largest statement_timeout", got)
	}
}

func TestBindArgs(t *testing.T) {
	in := []any{nil, "'; drop table x; --", true, false, json.Number("12.50"), 1.5, float32(0.25), 1e21,
		int(-1), int8(-8), int16(16), int32(-32), int64(math.MaxInt64), uint(1), uint8(8), uint16(16), uint32(32), uint64(math.MaxUint64)}
	want := [][]byte{nil, []byte("'; drop table x; --"), []byte("true"), []byte("false"), []byte("12.50"), []byte("1.5"), []byte("0.25"), []byte("1000000000000000000000"),
		[]byte("-1"), []byte("-8"), []byte("16"), []byte("-32"), []byte("9223372036854775807"), []byte("1"), []byte("8"), []byte("16"), []byte("32"), []byte("18446744073709551615")}
	got, err := bindArgs(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bindArgs = %#v\nwant %#v", got, want)
	}
	for _, bad := range []any{math.Inf(1), float32(math.Inf(-1)), []byte("x"), struct{}{}, pgx.QueryExecModeSimpleProtocol, pgx.NamedArgs{}, time.Now()} {
		if _, err := bindArgs([]any{bad}); !errors.Is(err, ErrUnsupportedArgument) {
			t.Errorf("bindArgs(%T) error = %v, want ErrUnsupportedArgument", bad, err)
		}
	}
}

func num(s string) json.Number { return json.Number(s) }

// textValueCases are PostgreSQL text forms under the settings sessionSQL
// pins, and what they map to.
var textValueCases = []struct {
	name string
	oid  uint32
	text string
	want any
}{
	{"bool true", pgtype.BoolOID, "t", true},
	{"bool false", pgtype.BoolOID, "f", false},
	{"int2", pgtype.Int2OID, "-32768", num("-32768")},
	{"int4", pgtype.Int4OID, "42", num("42")},
	{"int8", pgtype.Int8OID, "9223372036854775807", num("9223372036854775807")},
	{"oid", pgtype.OIDOID, "4294967295", num("4294967295")},
	{"float4", pgtype.Float4OID, "1.5", num("1.5")},
	{"float8 exponent", pgtype.Float8OID, "1e+300", num("1e+300")},
	{"float8 small", pgtype.Float8OID, "1.5e-07", num("1.5e-07")},
	{"float8 negative zero", pgtype.Float8OID, "-0", num("-0")},
	{"float8 NaN", pgtype.Float8OID, "NaN", "NaN"},
	{"float8 Infinity", pgtype.Float8OID, "Infinity", "Infinity"},
	{"float4 -Infinity", pgtype.Float4OID, "-Infinity", "-Infinity"},
	{"numeric", pgtype.NumericOID, "123.4500", num("123.4500")},
	{"numeric huge", pgtype.NumericOID, "123456789012345678901234567890.000000000000000000001", num("123456789012345678901234567890.000000000000000000001")},
	{"numeric NaN", pgtype.NumericOID, "NaN", "NaN"},
	{"numeric -Infinity", pgtype.NumericOID, "-Infinity", "-Infinity"},
	{"text", pgtype.TextOID, "héllo, wörld", "héllo, wörld"},
	{"text that looks like a number", pgtype.TextOID, "42", "42"},
	{"bpchar", pgtype.BPCharOID, "ab  ", "ab  "},
	{"uuid", pgtype.UUIDOID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	{"bytea", pgtype.ByteaOID, `\x00ff10`, `\x00ff10`},
	{"json", pgtype.JSONOID, `{"a": [1, 2.50, 12345678901234567890], "b": null, "c": "x", "d": true}`,
		map[string]any{"a": []any{num("1"), num("2.50"), num("12345678901234567890")}, "b": nil, "c": "x", "d": true}},
	{"jsonb scalar", pgtype.JSONBOID, `"just a string"`, "just a string"},
	{"jsonb number", pgtype.JSONBOID, `1e400`, num("1e400")},
	{"json invalid stays text", pgtype.JSONOID, `{"a":`, `{"a":`},
	{"json trailing data stays text", pgtype.JSONOID, `{} {}`, `{} {}`},
	{"date", pgtype.DateOID, "2024-02-29", "2024-02-29"},
	{"date BC", pgtype.DateOID, "0044-03-15 BC", "0044-03-15 BC"},
	{"date infinity", pgtype.DateOID, "infinity", "infinity"},
	{"timestamptz", pgtype.TimestamptzOID, "2024-01-02 01:04:05.123456+00", "2024-01-02T01:04:05.123456Z"},
	{"timestamptz whole seconds", pgtype.TimestamptzOID, "2024-01-02 01:04:05+00", "2024-01-02T01:04:05Z"},
	{"timestamptz offset", pgtype.TimestamptzOID, "2024-01-02 03:04:05+02", "2024-01-02T01:04:05Z"},
	{"timestamptz BC", pgtype.TimestamptzOID, "0044-03-15 00:00:00+00 BC", "0044-03-15 00:00:00+00 BC"},
	{"timestamptz -infinity", pgtype.TimestamptzOID, "-infinity", "-infinity"},
	{"timestamp", pgtype.TimestampOID, "2024-01-02 03:04:05.5", "2024-01-02T03:04:05.5"},
	{"timestamp year 10000", pgtype.TimestampOID, "10000-01-01 00:00:00", "10000-01-01 00:00:00"},
	{"time", pgtype.TimeOID, "13:14:15.5", "13:14:15.5"},
	{"interval", pgtype.IntervalOID, "1 year 2 mons 3 days 04:05:06", "1 year 2 mons 3 days 04:05:06"},
	{"unknown type", 999999, "(1,a)", "(1,a)"},
	{"int4[]", pgtype.Int4ArrayOID, "{1,2,NULL}", []any{num("1"), num("2"), nil}},
	{"int4[][]", pgtype.Int4ArrayOID, "{{1,2},{3,4}}", []any{[]any{num("1"), num("2")}, []any{num("3"), num("4")}}},
	{"int4[] lower bound", pgtype.Int4ArrayOID, "[0:1]={7,8}", []any{num("7"), num("8")}},
	{"empty array", pgtype.TextArrayOID, "{}", []any{}},
	{"text[] quoting", pgtype.TextArrayOID, `{"a b","c\"d","e\\f","NULL",NULL,"",plain,"{x}"}`,
		[]any{"a b", `c"d`, `e\f`, "NULL", nil, "", "plain", "{x}"}},
	{"bool[]", pgtype.BoolArrayOID, "{t,f}", []any{true, false}},
	{"numeric[]", pgtype.NumericArrayOID, "{1.50,NaN}", []any{num("1.50"), "NaN"}},
	{"timestamptz[]", pgtype.TimestamptzArrayOID, `{"2024-01-02 03:04:05+00",NULL}`, []any{"2024-01-02T03:04:05Z", nil}},
	{"jsonb[]", pgtype.JSONBArrayOID, `{"{\"a\": 1}","[true]"}`, []any{map[string]any{"a": num("1")}, []any{true}}},
	{"bytea[]", pgtype.ByteaArrayOID, `{"\\x01","\\x"}`, []any{`\x01`, `\x`}},
	{"malformed array stays text", pgtype.Int4ArrayOID, "{1,2", "{1,2"},
	{"array junk after stays text", pgtype.Int4ArrayOID, "{1}x", "{1}x"},
	{"array empty element stays text", pgtype.Int4ArrayOID, "{1,,2}", "{1,,2}"},
	{"array too deep stays text", pgtype.Int4ArrayOID, "{{{{{{{1}}}}}}}", "{{{{{{{1}}}}}}}"},
}

func TestTextValue(t *testing.T) {
	for _, tt := range textValueCases {
		if got := textValue(tt.oid, tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: textValue(%d, %q) = %#v, want %#v", tt.name, tt.oid, tt.text, got, tt.want)
		}
	}
}

func TestIsJSONNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "-12", "1.5", "0.001", "1e5", "1E+5", "1.5e-7", "123456789012345678901234567890"} {
		if !isJSONNumber(s) {
			t.Errorf("isJSONNumber(%q) = false", s)
		}
	}
	for _, s := range []string{"", "-", "01", "1.", ".5", "+1", "1e", "1e+", "NaN", "Infinity", "0x10", "1_000", " 1", "1 "} {
		if isJSONNumber(s) {
			t.Errorf("isJSONNumber(%q) = true", s)
		}
	}
}

func TestCutUTF8(t *testing.T) {
	s := "aé€😀" // 1 + 2 + 3 + 4 bytes
	for n, want := range map[int]string{0: "", 1: "a", 2: "a", 3: "aé", 4: "aé", 5: "aé", 6: "aé€", 9: "aé€", 10: s, 11: s} {
		if got := cutUTF8(s, n); got != want {
			t.Errorf("cutUTF8(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
}

func TestColumnName(t *testing.T) {
	long := strings.Repeat("é", 100)
	got := columnName(long)
	if len(got) > MaxColumnNameBytes || !utf8.ValidString(got) || !strings.HasPrefix(long, got) || len(got) < MaxColumnNameBytes-1 {
		t.Errorf("columnName cut %d bytes to %d bytes", len(long), len(got))
	}
	if got := columnName("a\xffb"); got != "a\uFFFDb" {
		t.Errorf("columnName kept invalid UTF-8: %q", got)
	}
	if got := columnName("?column?"); got != "?column?" {
		t.Errorf("columnName changed a short name: %q", got)
	}
}

func TestJSONSize(t *testing.T) {
	tests := []struct {
		v    any
		want int
	}{
		{nil, 4},
		{true, 4},
		{false, 5},
		{"héllo", 6},
		{num("-1.5"), 4},
		{[]any{}, 2},
		{[]any{num("1"), nil, "ab"}, 2 + 1 + 4 + 2 + 2},
		{map[string]any{}, 2},
		{map[string]any{"k": num("1"), "key": []any{"x"}}, 2 + (1 + 1 + 1) + (3 + 1 + 3) + 1},
	}
	for _, tt := range tests {
		if got := jsonSize(tt.v); got != tt.want {
			t.Errorf("jsonSize(%#v) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

func TestCellValueBounds(t *testing.T) {
	tests := []struct {
		name     string
		oid      uint32
		raw      []byte
		max      int
		want     any
		wantSize int
		wantCut  bool
	}{
		{"null", pgtype.TextOID, nil, 1, nil, 4, false},
		{"fits exactly", pgtype.TextOID, []byte("héllo"), 6, "héllo", 6, false},
		{"cut on a character boundary", pgtype.TextOID, []byte("héllo"), 2, "h", 1, true},
		{"cut keeps whole characters", pgtype.TextOID, []byte("ééé"), 5, "éé", 4, true},
		{"bool is never cut", pgtype.BoolOID, []byte("f"), 1, false, 5, false},
		{"number too long becomes cut text", pgtype.NumericOID, []byte("123456"), 4, "1234", 4, true},
		{"far too long is cut without mapping", pgtype.JSONBOID, []byte(`["` + strings.Repeat("x", 50) + `"]`), 10, `["xxxxxxxx`, 10, true},
		{"text longer than the bound that fits once mapped", pgtype.JSONOID, []byte(`[   1   ,   2   ]`), 5, []any{num("1"), num("2")}, 5, false},
		{"json too long becomes cut text", pgtype.JSONBOID, []byte(`{"a": "bcdef"}`), 6, `{"a": `, 6, true},
		{"array too long becomes cut text", pgtype.Int4ArrayOID, []byte("{1,2,3}"), 4, "{1,2", 4, true},
		{"array whose value is as large as its text", pgtype.TextArrayOID, []byte("{NULL,NULL}"), 11, []any{nil, nil}, 11, false},
		{"array of quoted strings smaller than its text", pgtype.TextArrayOID, []byte(`{"a b","c d"}`), 9, []any{"a b", "c d"}, 9, false},
		{"invalid UTF-8 replaced", pgtype.TextOID, []byte("a\xffb"), 10, "a\uFFFDb", 5, false},
		{"timestamp measured after mapping", pgtype.TimestamptzOID, []byte("2024-01-02 01:04:05+00"), 20, "2024-01-02T01:04:05Z", 20, false},
	}
	for _, tt := range tests {
		v, size, cut := cellValue(tt.oid, tt.raw, tt.max)
		if !reflect.DeepEqual(v, tt.want) || size != tt.wantSize || cut != tt.wantCut {
			t.Errorf("%s: cellValue = %#v, %d, %v; want %#v, %d, %v", tt.name, v, size, cut, tt.want, tt.wantSize, tt.wantCut)
		}
	}
}

// fakeRows is a rowReader over fixed text values.
type fakeRows struct {
	fds  []pgconn.FieldDescription
	data [][][]byte
	i    int
}

func (r *fakeRows) FieldDescriptions() []pgconn.FieldDescription { return r.fds }
func (r *fakeRows) Values() [][]byte                             { return r.data[r.i-1] }
func (r *fakeRows) NextRow() bool {
	if r.i >= len(r.data) {
		return false
	}
	r.i++
	return true
}

func textRows(cols []string, rows ...[]string) *fakeRows {
	r := &fakeRows{}
	for _, c := range cols {
		r.fds = append(r.fds, pgconn.FieldDescription{Name: c, DataTypeOID: pgtype.TextOID})
	}
	for _, row := range rows {
		var raw [][]byte
		for _, v := range row {
			raw = append(raw, []byte(v))
		}
		r.data = append(r.data, raw)
	}
	return r
}

func TestCollectBounds(t *testing.T) {
	big := ports.SQLLimits{MaxRows: 100, MaxColumns: 100, MaxCellBytes: 100, MaxTotalBytes: 1000}
	tests := []struct {
		name      string
		rows      *fakeRows
		lim       ports.SQLLimits
		wantCols  []string
		wantRows  [][]any
		wantTrunc []string
		wantEarly bool
	}{
		{
			name: "within every bound", rows: textRows([]string{"a", "b"}, []string{"1", "2"}, []string{"3", "4"}), lim: big,
			wantCols: []string{"a", "b"}, wantRows: [][]any{{"1", "2"}, {"3", "4"}},
		},
		{
			name: "no rows", rows: textRows([]string{"a"}), lim: big,
			wantCols: []string{"a"}, wantRows: [][]any{},
		},
		{
			name: "exactly max rows is not truncated", rows: textRows([]string{"a"}, []string{"1"}, []string{"2"}),
			lim:      ports.SQLLimits{MaxRows: 2, MaxColumns: 100, MaxCellBytes: 100, MaxTotalBytes: 1000},
			wantCols: []string{"a"}, wantRows: [][]any{{"1"}, {"2"}},
		},
		{
			name: "rows", rows: textRows([]string{"a"}, []string{"1"}, []string{"2"}, []string{"3"}),
			lim:      ports.SQLLimits{MaxRows: 2, MaxColumns: 100, MaxCellBytes: 100, MaxTotalBytes: 1000},
			wantCols: []string{"a"}, wantRows: [][]any{{"1"}, {"2"}}, wantTrunc: []string{"rows"}, wantEarly: true,
		},
		{
			name: "columns", rows: textRows([]string{"a", "b", "c"}, []string{"1", "2", "3"}),
			lim:      ports.SQLLimits{MaxRows: 100, MaxColumns: 2, MaxCellBytes: 100, MaxTotalBytes: 1000},
			wantCols: []string{"a", "b"}, wantRows: [][]any{{"1", "2"}}, wantTrunc: []string{"columns"},
		},
		{
			name: "cell bytes", rows: textRows([]string{"a"}, []string{"abcdef"}, []string{"ab"}),
			lim:      ports.SQLLimits{MaxRows: 100, MaxColumns: 100, MaxCellBytes: 3, MaxTotalBytes: 1000},
			wantCols: []string{"a"}, wantRows: [][]any{{"abc"}, {"ab"}}, wantTrunc: []string{"cell_bytes"},
		},
		{
			name: "total bytes stops before the row that does not fit", rows: textRows([]string{"a"}, []string{"abcd"}, []string{"efgh"}, []string{"ij"}),
			lim:      ports.SQLLimits{MaxRows: 100, MaxColumns: 100, MaxCellBytes: 100, MaxTotalBytes: 7},
			wantCols: []string{"a"}, wantRows: [][]any{{"abcd"}}, wantTrunc: []string{"total_bytes"}, wantEarly: true,
		},
		{
			name: "cut columns do not count towards the total", rows: textRows([]string{"a", "b"}, []string{"abcd", "zzzzzzzzzzzzzzzz"}, []string{"efgh", "zzzzzzzzzzzzzzz"}),
			lim:      ports.SQLLimits{MaxRows: 100, MaxColumns: 1, MaxCellBytes: 100, MaxTotalBytes: 8},
			wantCols: []string{"a"}, wantRows: [][]any{{"abcd"}, {"efgh"}}, wantTrunc: []string{"columns"},
		},
		{
			name: "a cell cut in a dropped row is not reported", rows: textRows([]string{"a"}, []string{"ab"}, []string{"abcdef"}),
			lim:      ports.SQLLimits{MaxRows: 100, MaxColumns: 100, MaxCellBytes: 4, MaxTotalBytes: 5},
			wantCols: []string{"a"}, wantRows: [][]any{{"ab"}}, wantTrunc: []string{"total_bytes"}, wantEarly: true,
		},
		{
			name: "every bound, in the documented order", rows: textRows([]string{"a", "b"}, []string{"abcdef", "x"}, []string{"y", "x"}, []string{"z", "x"}),
			lim:      ports.SQLLimits{MaxRows: 1, MaxColumns: 1, MaxCellBytes: 2, MaxTotalBytes: 1000},
			wantCols: []string{"a"}, wantRows: [][]any{{"ab"}}, wantTrunc: []string{"rows", "columns", "cell_bytes"}, wantEarly: true,
		},
		{
			name: "first row larger than the total", rows: textRows([]string{"a"}, []string{"abcdef"}),
			lim:      ports.SQLLimits{MaxRows: 100, MaxColumns: 100, MaxCellBytes: 100, MaxTotalBytes: 3},
			wantCols: []string{"a"}, wantRows: [][]any{}, wantTrunc: []string{"total_bytes"}, wantEarly: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, early := collect(tt.rows, tt.lim)
			if !reflect.DeepEqual(res.Columns, tt.wantCols) {
				t.Errorf("columns = %q, want %q", res.Columns, tt.wantCols)
			}
			rows, err := cellValues(res.Rows)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rows, tt.wantRows) {
				t.Errorf("rows = %q, want %q", rows, tt.wantRows)
			}
			if !reflect.DeepEqual(res.Truncated, tt.wantTrunc) {
				t.Errorf("truncated = %q, want %q", res.Truncated, tt.wantTrunc)
			}
			if early != tt.wantEarly {
				t.Errorf("early = %v, want %v", early, tt.wantEarly)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	pg := func(code string) error {
		return fmt.Errorf("running: %w", &pgconn.PgError{Code: code, Message: "driver text"})
	}
	tests := []struct {
		name string
		err  error
		want ports.SQLErrorKind
	}{
		{"statement timeout", pg("57014"), ports.SQLTimeout},
		{"read-only transaction", pg("25006"), ports.SQLRejected},
		{"insufficient privilege", pg("42501"), ports.SQLRejected},
		{"syntax error", pg("42601"), ports.SQLInvalid},
		{"undefined column", pg("42703"), ports.SQLInvalid},
		{"undefined table", pg("42P01"), ports.SQLInvalid},
		{"undefined function", pg("42883"), ports.SQLInvalid},
		{"invalid text representation", pg("22P02"), ports.SQLInvalid},
		{"division by zero", pg("22012"), ports.SQLInvalid},
		{"too many connections", pg("53300"), ports.SQLUnavailable},
		{"admin shutdown", pg("57P01"), ports.SQLUnavailable},
		{"cannot connect now", pg("57P03"), ports.SQLUnavailable},
		{"connection failure", pg("08006"), ports.SQLUnavailable},
		{"out of memory", pg("53200"), ports.SQLFailed},
		{"serialization failure", pg("40001"), ports.SQLFailed},
		{"internal error", pg("XX000"), ports.SQLFailed},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), ports.SQLTimeout},
		{"canceled", context.Canceled, ports.SQLFailed},
		{"closed", ErrClosed, ports.SQLUnavailable},
		{"eof", fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), ports.SQLUnavailable},
		{"net", &net.OpError{Op: "read", Err: errors.New("connection reset")}, ports.SQLUnavailable},
		{"other", errors.New("something"), ports.SQLFailed},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("%s: classify = %q, want %q", tt.name, got, tt.want)
		}
	}
}
