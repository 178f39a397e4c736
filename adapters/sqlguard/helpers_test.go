package sqlguard

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/auxten/postgresql-parser/pkg/sql/parser"
	"github.com/auxten/postgresql-parser/pkg/sql/sem/tree"
	"github.com/auxten/postgresql-parser/pkg/sql/types"
)

// reasonKeys names every refusal reason for the corpus files' "-- want:"
// lines. It is also the complete set a refusal may carry.
var reasonKeys = map[string]string{
	"empty":              reasonEmpty,
	"too_long":           reasonTooLong,
	"encoding":           reasonEncoding,
	"non_ascii":          reasonNonASCII,
	"too_deep":           reasonTooDeep,
	"unbalanced":         reasonUnbalanced,
	"unterminated":       reasonUnterminated,
	"multiple":           reasonMultiple,
	"dollar":             reasonDollarQuote,
	"positional":         reasonPositional,
	"param_name":         reasonParamName,
	"unicode_escape":     reasonUnicodeEscape,
	"prefixed":           reasonPrefixedString,
	"backslash":          reasonBackslash,
	"adjacent":           reasonAdjacentStrings,
	"nested_comment":     reasonNestedComment,
	"comment_end":        reasonCommentEnd,
	"stray_comment_end":  reasonStrayCommentEnd,
	"meta":               reasonMetaCommand,
	"bad_number":         reasonBadNumber,
	"annotation":         reasonTypeAnnotation,
	"from_only":          reasonFromOnly,
	"parse":              reasonParse,
	"not_select":         reasonNotSelect,
	"locking":            reasonLocking,
	"writing_cte":        reasonWritingCTE,
	"denied_function":    reasonDeniedFunction,
	"function":           reasonFunction,
	"qualified_function": reasonQualifiedFunc,
	"function_form":      reasonFunctionForm,
	"cast_type":          reasonCastType,
	"table_name":         reasonTableName,
	"identifier":         reasonIdentifier,
	"column_ref":         reasonColumnRef,
	"unsupported":        reasonUnsupported,
	"cockroach_only":     reasonCockroachOnly,
	"reserialization":    reasonReserialization,
	"star_argument":      reasonStarArgument,
	"any_all":            reasonAnyAllRightValue,
}

func isKnownReason(r string) bool {
	for _, known := range reasonKeys {
		if r == known {
			return true
		}
	}
	return false
}

// corpusEntry is one statement of a testdata/*.sql corpus.
type corpusEntry struct {
	line int    // first line of the entry in the file
	want string // "-- want: <key>" of a refuse entry
	sql  string
}

// loadCorpus reads a corpus file: statements separated by a line "-- next".
// A first line "-- want: key" names the expected refusal and is not part of
// the statement; lines starting with "--#" are notes and are dropped.
func loadCorpus(t testing.TB, path string) []corpusEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("opening corpus: %v", err)
	}
	defer f.Close()
	var (
		out   []corpusEntry
		cur   corpusEntry
		lines []string
		n     int
	)
	flush := func() {
		if cur.line != 0 {
			cur.sql = strings.Join(lines, "\n")
			out = append(out, cur)
		}
		cur, lines = corpusEntry{}, nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case line == "-- next":
			flush()
			continue
		case strings.HasPrefix(line, "--#"):
			continue
		case cur.line == 0 && strings.HasPrefix(line, "-- want: "):
			cur.want = strings.TrimSpace(strings.TrimPrefix(line, "-- want: "))
			cur.line = n
			continue
		}
		if cur.line == 0 {
			cur.line = n
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading corpus: %v", err)
	}
	flush()
	return out
}

// restoreNames turns the vetter's $n placeholders back into :name, so that
// an admitted statement can be vetted again. The vetter's output has no
// comments and no backslashes, and $ appears only in placeholders outside
// quotes, so this small scanner is exact for it.
func restoreNames(sql string, params []string) string {
	var b strings.Builder
	for i := 0; i < len(sql); {
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
			b.WriteString(sql[i : j+1])
			i = j + 1
		case c == '$':
			j := i + 1
			for j < len(sql) && isDigit(sql[j]) {
				j++
			}
			k, _ := strconv.Atoi(sql[i+1 : j])
			b.WriteString(":" + params[k-1])
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// relaxed vets the vetter's own output, which may legitimately be longer
// and more parenthesized than the caller's text.
var relaxed = New(Config{MaxLength: 1 << 20, MaxDepth: 1 << 12})

// checkRoundTrip asserts that admitted output vets again to itself.
func checkRoundTrip(t testing.TB, got ports.VettedQuery) {
	t.Helper()
	again, err := relaxed.vet(restoreNames(got.SQL, got.Params))
	if err != nil {
		t.Fatalf("output refused on re-vet (%v):\n%s", err, got.SQL)
	}
	if again.SQL != got.SQL {
		t.Fatalf("re-vet changed the SQL:\nfirst:  %s\nsecond: %s", got.SQL, again.SQL)
	}
	if !reflect.DeepEqual(again.Params, got.Params) || !reflect.DeepEqual(again.Tables, got.Tables) {
		t.Fatalf("re-vet changed params or tables: %v %v -> %v %v", got.Params, got.Tables, again.Params, again.Tables)
	}
}

// checkEquivalent asserts that the tree PostgreSQL will be asked to run is
// the tree that was vetted: the caller's statement (after the lexical
// rewrite) and the output are parsed by the same parser, and their
// canonical dumps must match. The dump erases only differences of spelling
// the printer introduces on purpose (grouping parentheses, CAST vs ::,
// INTERVAL literals, grammar-built vs written function names).
func checkEquivalent(t testing.TB, input string, got ports.VettedQuery) {
	t.Helper()
	lexed, err := lexInput(input, 1<<12)
	if err != nil {
		t.Fatalf("lexing admitted input: %v", err)
	}
	before := mustParse(t, lexed.sql)
	after := mustParse(t, got.SQL)
	if a, b := canon(before), canon(after); a != b {
		t.Fatalf("output does not mean the input:\ninput tree:  %s\noutput tree: %s\noutput: %s", a, b, got.SQL)
	}
}

func mustParse(t testing.TB, sql string) tree.Statement {
	t.Helper()
	var p parser.Parser
	stmts, err := p.ParseWithInt(sql, types.Int4)
	if err != nil || len(stmts) != 1 {
		t.Fatalf("parsing %q: %v (%d statements)", sql, err, len(stmts))
	}
	return stmts[0].AST
}

func canon(n any) string {
	var b strings.Builder
	canonValue(&b, reflect.ValueOf(n))
	return b.String()
}

// Fields that record only how something was spelled.
var canonIgnored = map[string]bool{"SyntaxMode": true, "Row": true, "TableSelect": true}

func canonValue(b *strings.Builder, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("nil")
		return
	}
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Ptr && v.IsNil() {
		b.WriteString("nil")
		return
	}
	if v.CanInterface() {
		if canonSpecial(b, v.Interface()) {
			return
		}
	}
	switch v.Kind() {
	case reflect.Ptr:
		canonValue(b, v.Elem())
	case reflect.Struct:
		b.WriteString(v.Type().Name() + "{")
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() || canonIgnored[f.Name] {
				continue
			}
			b.WriteString(f.Name + ":")
			canonValue(b, v.Field(i))
			b.WriteString(" ")
		}
		b.WriteString("}")
	case reflect.Slice, reflect.Array:
		b.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			canonValue(b, v.Index(i))
			b.WriteString(",")
		}
		b.WriteString("]")
	case reflect.String:
		b.WriteString(strconv.Quote(v.String()))
	case reflect.Bool:
		fmt.Fprint(b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fmt.Fprint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		fmt.Fprint(b, v.Uint())
	default:
		b.WriteString("?" + v.Kind().String())
	}
}

func canonSpecial(b *strings.Builder, x any) bool {
	if e, ok := x.(tree.Expr); ok && e == tree.DNull {
		b.WriteString("NULL")
		return true
	}
	switch n := x.(type) {
	case *tree.ParenExpr:
		canonValue(b, reflect.ValueOf(n.Expr))
	case *tree.ParenTableExpr:
		canonValue(b, reflect.ValueOf(n.Expr))
	case *tree.ParenSelect:
		canonSelect(b, n.Select)
	case *tree.Select:
		canonSelect(b, n)
	case *tree.NumVal:
		b.WriteString("Num(" + tree.AsString(n) + ")")
	case *tree.StrVal:
		b.WriteString("Str(" + strconv.Quote(n.RawString()) + ")")
	case *tree.DInterval:
		b.WriteString("Interval(" + tree.AsStringWithFlags(n, tree.FmtBareStrings) + ")")
	case *tree.CastExpr:
		if s, ok := n.Expr.(*tree.StrVal); ok && n.Type.Family() == types.IntervalFamily {
			if d, err := tree.ParseDInterval(s.RawString()); err == nil {
				canonSpecial(b, d)
				return true
			}
		}
		b.WriteString("Cast(")
		canonValue(b, reflect.ValueOf(n.Expr))
		b.WriteString(" AS " + n.Type.SQLString() + ")")
	case *types.T:
		b.WriteString(n.SQLString())
	case *tree.TableName:
		fmt.Fprintf(b, "Table(%q.%q.%q %v %v)", n.CatalogName, n.SchemaName, n.TableName, n.ExplicitCatalog, n.ExplicitSchema)
	case tree.ResolvableFunctionReference:
		switch f := n.FunctionReference.(type) {
		case *tree.FunctionDefinition:
			b.WriteString("Func(" + f.Name + ")")
		case *tree.UnresolvedName:
			// The printer names pg_catalog for every allowlisted function.
			b.WriteString("Func(" + strings.TrimPrefix(strings.Join(namePartsOf(f), "."), "pg_catalog.") + ")")
		}
	case *tree.UnresolvedName:
		fmt.Fprintf(b, "Name(%q star=%v)", namePartsOf(n), n.Star)
	case *tree.Placeholder:
		fmt.Fprintf(b, "$%d", n.Idx+1)
	case *tree.DBool:
		fmt.Fprintf(b, "Bool(%v)", bool(*n))
	case *tree.JoinTableExpr:
		jt := n.JoinType
		if jt == tree.AstInner {
			jt = ""
		}
		fmt.Fprintf(b, "Join(%q %q ", jt, n.Hint)
		canonValue(b, reflect.ValueOf(n.Left))
		b.WriteString(" ")
		canonValue(b, reflect.ValueOf(n.Right))
		b.WriteString(" ")
		canonValue(b, reflect.ValueOf(n.Cond))
		b.WriteString(")")
	case *tree.ComparisonExpr:
		if n.Operator != tree.Any && n.Operator != tree.Some && n.Operator != tree.All {
			return false
		}
		// On the right of ANY/ALL, a subquery in extra parentheses would be
		// an array value rather than a row source; any other parentheses
		// only group.
		fmt.Fprintf(b, "Cmp(%d %d ", n.Operator, n.SubOperator)
		canonValue(b, reflect.ValueOf(n.Left))
		b.WriteString(" ")
		r := tree.StripParens(n.Right)
		if _, sub := r.(*tree.Subquery); sub && r != n.Right {
			b.WriteString("ParenSubquery")
		}
		canonValue(b, reflect.ValueOf(r))
		b.WriteString(")")
	default:
		return false
	}
	return true
}

// canonSelect drops redundant ((...)) layers, then dumps the statement.
func canonSelect(b *strings.Builder, s *tree.Select) {
	s = unwrapSelect(s)
	if s == nil {
		b.WriteString("nil")
		return
	}
	canonValue(b, reflect.ValueOf(*s))
}

func namePartsOf(n *tree.UnresolvedName) []string {
	var parts []string
	for i := n.NumParts - 1; i >= 0; i-- {
		parts = append(parts, n.Parts[i])
	}
	return parts
}
