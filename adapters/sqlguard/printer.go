package sqlguard

import (
	"strconv"
	"strings"

	"github.com/auxten/postgresql-parser/pkg/sql/sem/tree"
	"github.com/auxten/postgresql-parser/pkg/sql/types"
)

// printer walks a parsed SELECT and writes it back as PostgreSQL. It is the
// only source of the text PostgreSQL runs, so it is also the vetting walk:
// each node kind it knows is printed field by field, every field it does not
// print must be empty, and any other node is refused. Nothing in the tree can
// reach PostgreSQL without passing through one of these methods.
//
// Output rules that keep the text independent of grammar details:
//   - every identifier is double-quoted (no keyword list, no case folding);
//   - every operator expression is parenthesized (no precedence table);
//   - string literals never contain a backslash (no E'...' and no dependence
//     on standard_conforming_strings);
//   - no comments, no semicolon, placeholders only as $1..$n.
//
// Errors are sticky: the first refusal wins and later calls do nothing.
type printer struct {
	buf     []byte
	err     error
	depth   int
	nparams int

	tables []string
	// scopes holds the CTE names visible at each WITH nesting level.
	scopes [][]string
}

func (p *printer) fail(reason string) {
	if p.err == nil {
		p.err = refuse(reason)
	}
}

func (p *printer) w(s string) { p.buf = append(p.buf, s...) }

// enter bounds recursion; every recursive method calls it and defers leave.
func (p *printer) enter() bool {
	p.depth++
	if p.depth > maxTreeDepth {
		p.fail(reasonTooDeep)
	}
	return p.err == nil
}

func (p *printer) leave() { p.depth-- }

// ---- statements ----------------------------------------------------------

func (p *printer) selectStmt(s *tree.Select) {
	if !p.enter() {
		return
	}
	defer p.leave()
	if s == nil || s.Select == nil {
		p.fail(reasonUnsupported)
		return
	}
	if len(s.Locking) > 0 {
		p.fail(reasonLocking)
		return
	}
	if s.With != nil {
		mark := len(p.scopes)
		p.with(s.With)
		defer func() { p.scopes = p.scopes[:mark] }()
		p.w(" ")
	}
	p.selectBody(s.Select)
	if len(s.OrderBy) > 0 {
		p.w(" ")
		p.orderBy(s.OrderBy)
	}
	if s.Limit != nil {
		p.limit(s.Limit)
	}
}

func (p *printer) with(w *tree.With) {
	if len(w.CTEList) == 0 {
		p.fail(reasonUnsupported)
		return
	}
	p.scopes = append(p.scopes, nil)
	level := len(p.scopes) - 1
	p.w("WITH ")
	if w.Recursive {
		p.w("RECURSIVE ")
		// A recursive WITH list sees all of its names, its own included.
		for _, cte := range w.CTEList {
			if cte == nil {
				p.fail(reasonUnsupported)
				return
			}
			p.scopes[level] = append(p.scopes[level], string(cte.Name.Alias))
		}
	}
	for i, cte := range w.CTEList {
		if cte == nil {
			p.fail(reasonUnsupported)
			return
		}
		if i > 0 {
			p.w(", ")
		}
		p.aliasClause(cte.Name)
		p.w(" AS ")
		switch body := cte.Stmt.(type) {
		case *tree.Select:
			p.parenSelect(body)
		case *tree.ParenSelect:
			p.parenSelect(body.Select)
		default:
			// INSERT, UPDATE, DELETE, UPSERT ... RETURNING and anything else.
			p.fail(reasonWritingCTE)
			return
		}
		if !w.Recursive {
			// A plain WITH entry is visible to the entries after it and the
			// body, not to itself: inside its own body the name is a table.
			p.scopes[level] = append(p.scopes[level], string(cte.Name.Alias))
		}
	}
}

// parenSelect writes "(" s ")" with exactly one pair of parentheses.
func (p *printer) parenSelect(s *tree.Select) {
	p.w("(")
	p.selectStmt(unwrapSelect(s))
	p.w(")")
}

// unwrapSelect drops redundant ((...)) layers that carry no clause of their
// own.
func unwrapSelect(s *tree.Select) *tree.Select {
	for s != nil && s.With == nil && len(s.OrderBy) == 0 && s.Limit == nil && len(s.Locking) == 0 {
		ps, ok := s.Select.(*tree.ParenSelect)
		if !ok || ps.Select == nil {
			break
		}
		s = ps.Select
	}
	return s
}

func (p *printer) selectBody(body tree.SelectStatement) {
	if !p.enter() {
		return
	}
	defer p.leave()
	switch n := body.(type) {
	case *tree.SelectClause:
		p.selectClause(n)
	case *tree.ParenSelect:
		if n.Select == nil {
			p.fail(reasonUnsupported)
			return
		}
		p.parenSelect(n.Select)
	case *tree.UnionClause:
		p.union(n)
	case *tree.ValuesClause:
		p.values(n)
	default:
		p.fail(reasonNotSelect)
	}
}

func (p *printer) union(u *tree.UnionClause) {
	var op string
	switch u.Type {
	case tree.UnionOp:
		op = " UNION "
	case tree.IntersectOp:
		op = " INTERSECT "
	case tree.ExceptOp:
		op = " EXCEPT "
	default:
		p.fail(reasonUnsupported)
		return
	}
	if u.All {
		op += "ALL "
	}
	// A chain of the same operation is left-associative in both grammars
	// and is written flat (collected iteratively, so a long chain does not
	// recurse); any other operand is parenthesized.
	chain := []*tree.UnionClause{u}
	for {
		last := chain[len(chain)-1]
		if last.Left == nil || last.Right == nil {
			p.fail(reasonUnsupported)
			return
		}
		l, ok := bareSelect(last.Left).(*tree.UnionClause)
		if !ok || l.Type != u.Type || l.All != u.All {
			break
		}
		chain = append(chain, l)
	}
	p.setOperand(chain[len(chain)-1].Left)
	for i := len(chain) - 1; i >= 0; i-- {
		p.w(op)
		p.setOperand(chain[i].Right)
	}
}

// bareSelect returns s's body when s carries no clause of its own.
func bareSelect(s *tree.Select) tree.SelectStatement {
	if s == nil || s.With != nil || len(s.OrderBy) > 0 || s.Limit != nil || len(s.Locking) > 0 {
		return nil
	}
	return s.Select
}

func (p *printer) setOperand(s *tree.Select) {
	switch bareSelect(s).(type) {
	case *tree.SelectClause, *tree.ValuesClause, *tree.ParenSelect:
		p.selectStmt(s)
	default:
		p.parenSelect(s)
	}
}

func (p *printer) values(v *tree.ValuesClause) {
	if len(v.Rows) == 0 {
		p.fail(reasonUnsupported)
		return
	}
	p.w("VALUES ")
	for i, row := range v.Rows {
		if i > 0 {
			p.w(", ")
		}
		p.w("(")
		p.exprList(row)
		p.w(")")
	}
}

func (p *printer) selectClause(sc *tree.SelectClause) {
	if sc.From.AsOf.Expr != nil {
		p.fail(reasonCockroachOnly)
		return
	}
	// TABLE t arrives as SELECT * FROM t with TableSelect set; the SELECT
	// form is written, which means the same.
	p.w("SELECT ")
	if len(sc.DistinctOn) > 0 {
		p.w("DISTINCT ON (")
		p.exprList(tree.Exprs(sc.DistinctOn))
		p.w(") ")
	} else if sc.Distinct {
		p.w("DISTINCT ")
	}
	for i := range sc.Exprs {
		if i > 0 {
			p.w(", ")
		}
		p.expr(sc.Exprs[i].Expr)
		if sc.Exprs[i].As != "" {
			p.w(" AS ")
			p.ident(string(sc.Exprs[i].As))
		}
	}
	if len(sc.From.Tables) > 0 {
		p.w(" FROM ")
		for i, t := range sc.From.Tables {
			if i > 0 {
				p.w(", ")
			}
			p.tableExpr(t)
		}
	}
	if sc.Where != nil {
		p.w(" WHERE ")
		p.expr(sc.Where.Expr)
	}
	if len(sc.GroupBy) > 0 {
		p.w(" GROUP BY ")
		p.exprList(tree.Exprs(sc.GroupBy))
	}
	if sc.Having != nil {
		p.w(" HAVING ")
		p.expr(sc.Having.Expr)
	}
	if len(sc.Window) > 0 {
		p.w(" WINDOW ")
		for i, wd := range sc.Window {
			if wd == nil || wd.Name == "" {
				p.fail(reasonUnsupported)
				return
			}
			if i > 0 {
				p.w(", ")
			}
			p.ident(string(wd.Name))
			p.w(" AS ")
			p.windowSpec(wd)
		}
	}
}

func (p *printer) orderBy(ob tree.OrderBy) {
	p.w("ORDER BY ")
	for i, o := range ob {
		if o == nil || o.OrderType != tree.OrderByColumn || o.Index != "" || o.Table.TableName != "" {
			// ORDER BY PRIMARY KEY / INDEX is CockroachDB-only.
			p.fail(reasonCockroachOnly)
			return
		}
		if i > 0 {
			p.w(", ")
		}
		p.expr(o.Expr)
		switch o.Direction {
		case tree.DefaultDirection:
		case tree.Ascending:
			p.w(" ASC")
		case tree.Descending:
			p.w(" DESC")
		default:
			p.fail(reasonUnsupported)
		}
		switch o.NullsOrder {
		case tree.DefaultNullsOrder:
		case tree.NullsFirst:
			p.w(" NULLS FIRST")
		case tree.NullsLast:
			p.w(" NULLS LAST")
		default:
			p.fail(reasonUnsupported)
		}
	}
}

func (p *printer) limit(l *tree.Limit) {
	switch {
	case l.Count != nil:
		p.w(" LIMIT ")
		p.expr(l.Count)
	case l.LimitAll:
		p.w(" LIMIT ALL")
	}
	if l.Offset != nil {
		p.w(" OFFSET ")
		p.expr(l.Offset)
	}
}

// ---- FROM ----------------------------------------------------------------

func (p *printer) tableExpr(te tree.TableExpr) {
	if !p.enter() {
		return
	}
	defer p.leave()
	switch n := te.(type) {
	case *tree.AliasedTableExpr:
		p.aliasedTable(n)
	case *tree.JoinTableExpr:
		p.join(n)
	case *tree.ParenTableExpr:
		// PostgreSQL allows parentheses only around a join.
		inner := tree.StripTableParens(n)
		if j, ok := inner.(*tree.JoinTableExpr); ok {
			p.w("(")
			p.join(j)
			p.w(")")
			return
		}
		p.tableExpr(inner)
	case *tree.StatementSource:
		p.fail(reasonCockroachOnly)
	default:
		p.fail(reasonUnsupported)
	}
}

func (p *printer) aliasedTable(a *tree.AliasedTableExpr) {
	if a.IndexFlags != nil {
		p.fail(reasonCockroachOnly)
		return
	}
	if a.Lateral {
		p.w("LATERAL ")
	}
	switch inner := tree.StripTableParens(a.Expr).(type) {
	case *tree.TableName:
		p.tableName(inner)
	case *tree.Subquery:
		if inner.Exists {
			p.fail(reasonUnsupported)
			return
		}
		p.subquery(inner.Select)
	case *tree.RowsFromExpr:
		p.rowsFrom(inner)
	case *tree.JoinTableExpr:
		p.w("(")
		p.join(inner)
		p.w(")")
	case *tree.StatementSource:
		p.fail(reasonCockroachOnly)
		return
	default:
		p.fail(reasonUnsupported)
		return
	}
	if a.Ordinality {
		p.w(" WITH ORDINALITY")
	}
	if a.As.Alias != "" {
		p.w(" AS ")
		p.aliasClause(a.As)
	} else if len(a.As.Cols) > 0 {
		p.fail(reasonUnsupported)
	}
}

func (p *printer) rowsFrom(r *tree.RowsFromExpr) {
	if len(r.Items) == 0 {
		p.fail(reasonUnsupported)
		return
	}
	for _, it := range r.Items {
		if _, ok := it.(*tree.FuncExpr); !ok {
			p.fail(reasonUnsupported)
			return
		}
	}
	if len(r.Items) == 1 {
		p.expr(r.Items[0])
		return
	}
	p.w("ROWS FROM (")
	p.exprList(r.Items)
	p.w(")")
}

func (p *printer) join(j *tree.JoinTableExpr) {
	if !p.enter() {
		return
	}
	defer p.leave()
	if j.Hint != "" {
		p.fail(reasonCockroachOnly)
		return
	}
	var kind string
	switch j.JoinType {
	case "", tree.AstInner:
		kind = "JOIN "
	case tree.AstLeft:
		kind = "LEFT JOIN "
	case tree.AstRight:
		kind = "RIGHT JOIN "
	case tree.AstFull:
		kind = "FULL JOIN "
	case tree.AstCross:
		kind = "CROSS JOIN "
	default:
		p.fail(reasonUnsupported)
		return
	}
	// Joins are left-associative: the left side is written bare, a join on
	// the right side is parenthesized.
	p.tableExpr(j.Left)
	p.w(" ")
	if _, natural := j.Cond.(tree.NaturalJoinCond); natural {
		p.w("NATURAL ")
	}
	p.w(kind)
	if r, ok := tree.StripTableParens(j.Right).(*tree.JoinTableExpr); ok {
		p.w("(")
		p.join(r)
		p.w(")")
	} else {
		p.tableExpr(j.Right)
	}
	switch c := j.Cond.(type) {
	case nil, tree.NaturalJoinCond:
	case *tree.OnJoinCond:
		p.w(" ON ")
		p.expr(c.Expr)
	case *tree.UsingJoinCond:
		if len(c.Cols) == 0 {
			p.fail(reasonUnsupported)
			return
		}
		p.w(" USING (")
		p.nameList(c.Cols)
		p.w(")")
	default:
		p.fail(reasonUnsupported)
	}
}

// tableName writes a table reference and records it in Tables unless it
// names a CTE in scope.
func (p *printer) tableName(tn *tree.TableName) {
	name := string(tn.TableName)
	if !tn.ExplicitSchema && !tn.ExplicitCatalog && p.inCTEScope(name) {
		// PostgreSQL, too, resolves an unqualified name that a WITH in
		// scope binds to that CTE before looking for a table.
		p.ident(name)
		return
	}
	if tn.ExplicitCatalog || !validTableIdent(name) {
		p.fail(reasonTableName)
		return
	}
	if tn.ExplicitSchema {
		schema := string(tn.SchemaName)
		if !validTableIdent(schema) {
			p.fail(reasonTableName)
			return
		}
		p.ident(schema)
		p.w(".")
		p.ident(name)
		p.addTable(schema + "." + name)
		return
	}
	p.ident(name)
	p.addTable(name)
}

func (p *printer) inCTEScope(name string) bool {
	for _, level := range p.scopes {
		for _, n := range level {
			if n == name {
				return true
			}
		}
	}
	return false
}

func (p *printer) addTable(t string) {
	for _, seen := range p.tables {
		if seen == t {
			return
		}
	}
	p.tables = append(p.tables, t)
}

// validTableIdent admits what an unquoted PostgreSQL identifier folds to,
// ASCII only. Authorization compares these names as strings: a quoted
// "Users", "a.b" or "*" would otherwise alias a different name or a policy
// wildcard.
func validTableIdent(s string) bool {
	if s == "" || len(s) > maxIdentBytes || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || isDigit(c) || (c >= 'a' && c <= 'z')) {
			return false
		}
	}
	return true
}

func (p *printer) aliasClause(a tree.AliasClause) {
	p.ident(string(a.Alias))
	if len(a.Cols) > 0 {
		p.w(" (")
		p.nameList(a.Cols)
		p.w(")")
	}
}

func (p *printer) nameList(names tree.NameList) {
	for i, n := range names {
		if i > 0 {
			p.w(", ")
		}
		p.ident(string(n))
	}
}

// ident writes a double-quoted identifier.
func (p *printer) ident(s string) {
	if s == "" || len(s) > maxIdentBytes {
		p.fail(reasonIdentifier)
		return
	}
	p.buf = append(p.buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			p.buf = append(p.buf, '"')
		}
		p.buf = append(p.buf, s[i])
	}
	p.buf = append(p.buf, '"')
}

// ---- expressions ---------------------------------------------------------

func (p *printer) exprList(es tree.Exprs) {
	for i, e := range es {
		if i > 0 {
			p.w(", ")
		}
		p.expr(e)
	}
}

// flattenable are the binary operators both grammars parse left-associative,
// so a left operand with the same operator needs no parentheses.
func flattenable(op tree.BinaryOperator) bool {
	switch op {
	case tree.Plus, tree.Minus, tree.Mult, tree.Div, tree.Mod, tree.Concat:
		return true
	}
	return false
}

var binaryOps = map[tree.BinaryOperator]string{
	tree.Bitand: "&", tree.Bitor: "|", tree.Bitxor: "#",
	tree.Plus: "+", tree.Minus: "-", tree.Mult: "*", tree.Div: "/", tree.Mod: "%",
	tree.Pow: "^", tree.Concat: "||", tree.LShift: "<<", tree.RShift: ">>",
	tree.JSONFetchVal: "->", tree.JSONFetchText: "->>",
	tree.JSONFetchValPath: "#>", tree.JSONFetchTextPath: "#>>",
}

var comparisonOps = map[tree.ComparisonOperator]string{
	tree.EQ: "=", tree.LT: "<", tree.GT: ">", tree.LE: "<=", tree.GE: ">=", tree.NE: "<>",
	tree.Like: "LIKE", tree.NotLike: "NOT LIKE", tree.ILike: "ILIKE", tree.NotILike: "NOT ILIKE",
	tree.SimilarTo: "SIMILAR TO", tree.NotSimilarTo: "NOT SIMILAR TO",
	tree.RegMatch: "~", tree.NotRegMatch: "!~", tree.RegIMatch: "~*", tree.NotRegIMatch: "!~*",
	tree.IsDistinctFrom: "IS DISTINCT FROM", tree.IsNotDistinctFrom: "IS NOT DISTINCT FROM",
	tree.Contains: "@>", tree.ContainedBy: "<@",
	tree.JSONExists: "?", tree.JSONSomeExists: "?|", tree.JSONAllExists: "?&",
	tree.Overlaps: "&&",
}

// subOps are the operators PostgreSQL accepts before ANY/SOME/ALL.
var subOps = map[tree.ComparisonOperator]string{
	tree.EQ: "=", tree.LT: "<", tree.GT: ">", tree.LE: "<=", tree.GE: ">=", tree.NE: "<>",
	tree.Like: "LIKE", tree.NotLike: "NOT LIKE", tree.ILike: "ILIKE", tree.NotILike: "NOT ILIKE",
}

func (p *printer) expr(e tree.Expr) {
	if !p.enter() {
		return
	}
	defer p.leave()
	switch n := e.(type) {
	case *tree.ParenExpr:
		// Grouping is re-derived: every operator expression below writes
		// its own parentheses.
		p.expr(n.Expr)

	case *tree.AndExpr, *tree.OrExpr:
		p.boolChain(n)

	case *tree.NotExpr:
		p.w("(NOT ")
		p.expr(n.Expr)
		p.w(")")

	case *tree.BinaryExpr:
		p.binary(n)

	case *tree.UnaryExpr:
		switch n.Operator {
		case tree.UnaryMinus:
			p.w("(-")
		case tree.UnaryComplement:
			p.w("(~")
		default:
			p.fail(reasonUnsupported)
			return
		}
		if num, ok := tree.StripParens(n.Expr).(*tree.NumVal); ok && n.Operator == tree.UnaryMinus &&
			!strings.HasPrefix(tree.AsString(num), "-") {
			// -(1) stays an operator on a constant; -1 would fold into
			// the constant. A negative constant is already parenthesized.
			p.w("(")
			p.expr(n.Expr)
			p.w("))")
			return
		}
		p.expr(n.Expr)
		p.w(")")

	case *tree.ComparisonExpr:
		p.comparison(n)

	case *tree.RangeCond:
		p.w("(")
		p.expr(n.Left)
		if n.Not {
			p.w(" NOT")
		}
		p.w(" BETWEEN ")
		if n.Symmetric {
			p.w("SYMMETRIC ")
		}
		p.expr(n.From)
		p.w(" AND ")
		p.expr(n.To)
		p.w(")")

	case *tree.CaseExpr:
		if len(n.Whens) == 0 {
			p.fail(reasonUnsupported)
			return
		}
		p.w("CASE ")
		if n.Expr != nil {
			p.expr(n.Expr)
			p.w(" ")
		}
		for _, wh := range n.Whens {
			if wh == nil {
				p.fail(reasonUnsupported)
				return
			}
			p.w("WHEN ")
			p.expr(wh.Cond)
			p.w(" THEN ")
			p.expr(wh.Val)
			p.w(" ")
		}
		if n.Else != nil {
			p.w("ELSE ")
			p.expr(n.Else)
			p.w(" ")
		}
		p.w("END")

	case *tree.CastExpr:
		name, ok := pgTypeName(n.Type)
		if !ok {
			p.fail(reasonCastType)
			return
		}
		p.w("CAST(")
		p.expr(n.Expr)
		p.w(" AS " + name + ")")

	case *tree.CoalesceExpr:
		if n.Name != "COALESCE" || len(n.Exprs) == 0 {
			// IFNULL is CockroachDB-only.
			p.fail(reasonCockroachOnly)
			return
		}
		p.w("COALESCE(")
		p.exprList(n.Exprs)
		p.w(")")

	case *tree.NullIfExpr:
		p.w("NULLIF(")
		p.expr(n.Expr1)
		p.w(", ")
		p.expr(n.Expr2)
		p.w(")")

	case *tree.FuncExpr:
		p.funcExpr(n)

	case *tree.Subquery:
		if n.Exists {
			p.w("EXISTS ")
		}
		p.subquery(n.Select)

	case *tree.ArrayFlatten:
		sq, ok := n.Subquery.(*tree.Subquery)
		if !ok || sq.Exists {
			p.fail(reasonUnsupported)
			return
		}
		p.w("ARRAY")
		p.subquery(sq.Select)

	case *tree.Array:
		p.w("ARRAY[")
		p.exprList(n.Exprs)
		p.w("]")

	case *tree.Tuple:
		if len(n.Labels) > 0 {
			p.fail(reasonCockroachOnly)
			return
		}
		p.w("ROW(")
		p.exprList(n.Exprs)
		p.w(")")

	case *tree.IndirectionExpr:
		if len(n.Indirection) == 0 {
			p.fail(reasonUnsupported)
			return
		}
		if un, ok := n.Expr.(*tree.UnresolvedName); ok && !un.Star {
			p.columnRef(un)
		} else {
			p.w("(")
			p.expr(n.Expr)
			p.w(")")
		}
		for _, s := range n.Indirection {
			if s == nil || (!s.Slice && (s.Begin == nil || s.End != nil)) {
				p.fail(reasonUnsupported)
				return
			}
			p.w("[")
			if s.Begin != nil {
				p.expr(s.Begin)
			}
			if s.Slice {
				// Spaced so that ":" can never read as a named parameter.
				p.w(" : ")
				if s.End != nil {
					p.expr(s.End)
				}
			}
			p.w("]")
		}

	case *tree.ColumnAccessExpr:
		if n.ByIndex {
			p.fail(reasonCockroachOnly)
			return
		}
		p.w("(")
		p.expr(n.Expr)
		p.w(").")
		p.ident(n.ColName)

	case *tree.UnresolvedName:
		p.columnRef(n)

	case tree.UnqualifiedStar:
		p.w("*")

	case *tree.Placeholder:
		if int(n.Idx) >= p.nparams {
			p.fail(reasonPositional)
			return
		}
		p.w("$")
		p.buf = strconv.AppendInt(p.buf, int64(n.Idx)+1, 10)

	case *tree.NumVal:
		p.number(n)

	case *tree.StrVal:
		// b'...' and x'...' are refused by the lexical pass; a bytes
		// constant offers Bytes, not String, as its natural type.
		if ts := n.AvailableTypes(); len(ts) == 0 || ts[0] != types.String {
			p.fail(reasonPrefixedString)
			return
		}
		p.stringLit(n.RawString())

	case *tree.DBool:
		if *n {
			p.w("TRUE")
		} else {
			p.w("FALSE")
		}

	case *tree.DInterval:
		// INTERVAL '...' is parsed into a value; write it back as a cast of
		// the value's canonical text.
		p.w("CAST(")
		p.stringLit(tree.AsStringWithFlags(n, tree.FmtBareStrings))
		p.w(" AS interval)")

	default:
		if e == tree.DNull {
			p.w("NULL")
			return
		}
		// IF(), IFERROR(), ANNOTATE_TYPE(), IS OF, COLLATE, @1, (x).*,
		// DEFAULT, bit-string constants and anything the parser adds later.
		p.fail(reasonUnsupported)
	}
}

// boolChain writes an AND or OR. A left-deep chain of the same connective
// is written flat; it is collected iteratively so that a long WHERE clause
// neither recurses nor nests the output.
func (p *printer) boolChain(e tree.Expr) {
	_, isAnd := e.(*tree.AndExpr)
	word := " OR "
	if isAnd {
		word = " AND "
	}
	var rights []tree.Expr
	cur := e
	for {
		var l, r tree.Expr
		switch n := cur.(type) {
		case *tree.AndExpr:
			if !isAnd {
				break
			}
			l, r = n.Left, n.Right
		case *tree.OrExpr:
			if isAnd {
				break
			}
			l, r = n.Left, n.Right
		}
		if r == nil {
			break
		}
		rights = append(rights, r)
		cur = tree.StripParens(l)
	}
	p.w("(")
	p.expr(cur)
	for i := len(rights) - 1; i >= 0; i-- {
		p.w(word)
		p.expr(rights[i])
	}
	p.w(")")
}

// binary writes a binary operator expression. A left-deep chain of the same
// flattenable operator is written flat, collected iteratively.
func (p *printer) binary(n *tree.BinaryExpr) {
	op, ok := binaryOps[n.Operator]
	if !ok {
		// FloorDiv (//) is CockroachDB-only.
		p.fail(reasonCockroachOnly)
		return
	}
	rights := []tree.Expr{n.Right}
	cur := n.Left
	if flattenable(n.Operator) {
		for {
			l, ok := tree.StripParens(cur).(*tree.BinaryExpr)
			if !ok || l.Operator != n.Operator {
				break
			}
			rights = append(rights, l.Right)
			cur = l.Left
		}
	}
	p.w("(")
	p.expr(cur)
	for i := len(rights) - 1; i >= 0; i-- {
		p.w(" " + op + " ")
		p.expr(rights[i])
	}
	p.w(")")
}

func (p *printer) comparison(n *tree.ComparisonExpr) {
	switch n.Operator {
	case tree.Any, tree.Some, tree.All:
		sub, ok := subOps[n.SubOperator]
		if !ok {
			p.fail(reasonUnsupported)
			return
		}
		word := map[tree.ComparisonOperator]string{tree.Any: " ANY ", tree.Some: " SOME ", tree.All: " ALL "}[n.Operator]
		p.w("(")
		p.expr(n.Left)
		p.w(" " + sub + word)
		switch r := n.Right.(type) {
		case *tree.Subquery:
			if r.Exists {
				p.fail(reasonUnsupported)
				return
			}
			p.subquery(r.Select)
		case *tree.Tuple:
			// x = ANY (1, 2) is CockroachDB-only.
			p.fail(reasonAnyAllRightValue)
			return
		default:
			// Both grammars read ANY ((SELECT ...)) as the subquery form,
			// so an array-valued subquery in parentheses would change
			// meaning when written back. The parser never builds one;
			// refuse rather than guess.
			if _, ok := tree.StripParens(r).(*tree.Subquery); ok {
				p.fail(reasonAnyAllRightValue)
				return
			}
			p.w("(")
			p.expr(r)
			p.w(")")
		}
		p.w(")")
		return

	case tree.In, tree.NotIn:
		p.w("(")
		p.expr(n.Left)
		if n.Operator == tree.In {
			p.w(" IN ")
		} else {
			p.w(" NOT IN ")
		}
		switch r := n.Right.(type) {
		case *tree.Tuple:
			if len(r.Labels) > 0 || len(r.Exprs) == 0 {
				p.fail(reasonUnsupported)
				return
			}
			p.w("(")
			p.exprList(r.Exprs)
			p.w(")")
		case *tree.Subquery:
			if r.Exists {
				p.fail(reasonUnsupported)
				return
			}
			p.subquery(r.Select)
		default:
			p.fail(reasonUnsupported)
			return
		}
		p.w(")")
		return

	case tree.IsDistinctFrom, tree.IsNotDistinctFrom:
		// IS [NOT] NULL / TRUE / FALSE parse into these; write them back in
		// their own form (IS NULL differs from IS NOT DISTINCT FROM NULL on
		// row values).
		not := n.Operator == tree.IsDistinctFrom
		var word string
		switch {
		case n.Right == tree.DNull:
			word = "NULL"
		case n.Right == tree.DBoolTrue:
			word = "TRUE"
		case n.Right == tree.DBoolFalse:
			word = "FALSE"
		}
		if word != "" {
			p.w("(")
			p.expr(n.Left)
			if not {
				p.w(" IS NOT " + word + ")")
			} else {
				p.w(" IS " + word + ")")
			}
			return
		}
	}
	op, ok := comparisonOps[n.Operator]
	if !ok {
		p.fail(reasonUnsupported)
		return
	}
	p.w("(")
	p.expr(n.Left)
	p.w(" " + op + " ")
	p.expr(n.Right)
	p.w(")")
}

// subquery writes a parenthesized subquery.
func (p *printer) subquery(s tree.SelectStatement) {
	switch n := s.(type) {
	case *tree.ParenSelect:
		if n.Select == nil {
			p.fail(reasonUnsupported)
			return
		}
		p.parenSelect(n.Select)
	case nil:
		p.fail(reasonUnsupported)
	default:
		p.w("(")
		p.selectBody(n)
		p.w(")")
	}
}

// columnRef writes [[schema.]table.]column or a star form.
func (p *printer) columnRef(n *tree.UnresolvedName) {
	if n.NumParts < 1 || n.NumParts > 3 {
		p.fail(reasonColumnRef)
		return
	}
	last := 0
	if n.Star {
		last = 1
	}
	for i := n.NumParts - 1; i >= last; i-- {
		p.ident(n.Parts[i])
		if i > last {
			p.w(".")
		}
	}
	if n.Star {
		if n.NumParts > 1 {
			p.w(".")
		}
		p.w("*")
	}
}

func (p *printer) number(n *tree.NumVal) {
	s := tree.AsStringWithFlags(n, tree.FmtSimple)
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || !isDigit(digits[0]) && digits[0] != '.' {
		p.fail(reasonBadNumber)
		return
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if !(isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			p.fail(reasonBadNumber)
			return
		}
	}
	if neg {
		p.w("(-" + digits + ")")
		return
	}
	p.w(digits)
}

// stringLit writes a standard string literal. It never writes a backslash,
// so the text means the same whatever standard_conforming_strings is.
func (p *printer) stringLit(s string) {
	if strings.IndexByte(s, '\\') >= 0 || strings.IndexByte(s, 0) >= 0 {
		p.fail(reasonBackslash)
		return
	}
	p.buf = append(p.buf, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			p.buf = append(p.buf, '\'')
		}
		p.buf = append(p.buf, s[i])
	}
	p.buf = append(p.buf, '\'')
}

// ---- functions -----------------------------------------------------------

func (p *printer) funcExpr(f *tree.FuncExpr) {
	switch ref := f.Func.FunctionReference.(type) {
	case *tree.UnresolvedName:
		p.namedFunc(ref, f)
	case *tree.FunctionDefinition:
		// The grammar builds these for its special forms; a caller's own
		// call always carries an UnresolvedName.
		if f.Type != 0 || f.Filter != nil || f.WindowDef != nil || len(f.OrderBy) > 0 {
			p.fail(reasonFunctionForm)
			return
		}
		p.specialFunc(ref.Name, f.Exprs)
	default:
		p.fail(reasonFunction)
	}
}

func (p *printer) namedFunc(ref *tree.UnresolvedName, f *tree.FuncExpr) {
	if ref.Star || ref.NumParts < 1 {
		p.fail(reasonFunction)
		return
	}
	name := ref.Parts[0]
	if deniedFunction(name) {
		p.fail(reasonDeniedFunction)
		return
	}
	if ref.NumParts > 2 || (ref.NumParts == 2 && ref.Parts[1] != "pg_catalog") {
		p.fail(reasonQualifiedFunc)
		return
	}
	if _, ok := allowedFunctions[name]; !ok {
		p.fail(reasonFunction)
		return
	}
	// Every allowlisted function is a built-in: naming its schema keeps
	// PostgreSQL's overload resolution from preferring a same-named
	// function elsewhere on the search_path.
	p.w("pg_catalog.")
	p.w(name)
	p.w("(")
	switch f.Type {
	case 0:
	case tree.DistinctFuncType:
		p.w("DISTINCT ")
	case tree.AllFuncType:
		p.w("ALL ")
	default:
		p.fail(reasonFunctionForm)
		return
	}
	for i, a := range f.Exprs {
		if _, star := a.(tree.UnqualifiedStar); star {
			if name != "count" || len(f.Exprs) != 1 || f.Type != 0 {
				p.fail(reasonStarArgument)
				return
			}
		}
		if i > 0 {
			p.w(", ")
		}
		p.expr(a)
	}
	if len(f.OrderBy) > 0 {
		p.w(" ")
		p.orderBy(f.OrderBy)
	}
	p.w(")")
	if f.Filter != nil {
		p.w(" FILTER (WHERE ")
		p.expr(f.Filter)
		p.w(")")
	}
	if wd := f.WindowDef; wd != nil {
		p.w(" OVER ")
		if wd.Name != "" {
			if wd.RefName != "" || len(wd.Partitions) > 0 || len(wd.OrderBy) > 0 || wd.Frame != nil {
				p.fail(reasonUnsupported)
				return
			}
			p.ident(string(wd.Name))
		} else {
			p.windowSpec(wd)
		}
	}
}

// specialFunc writes a grammar-built call back in PostgreSQL's syntax for
// it. Names the grammar builds that are not listed here (current_user,
// current_schema, current_database, pg_collation_for, overlay,
// extract_duration) are refused.
func (p *printer) specialFunc(name string, args tree.Exprs) {
	switch name {
	case "current_date", "current_time", "current_timestamp", "localtime", "localtimestamp":
		if len(args) != 0 {
			p.fail(reasonFunctionForm)
			return
		}
		p.w(strings.ToUpper(name))

	case "extract":
		field, ok := args0Str(args, 2)
		if !ok {
			p.fail(reasonFunctionForm)
			return
		}
		p.w("EXTRACT(")
		p.stringLit(field)
		p.w(" FROM ")
		p.expr(args[1])
		p.w(")")

	case "greatest", "least":
		if len(args) == 0 {
			p.fail(reasonFunctionForm)
			return
		}
		p.w(strings.ToUpper(name) + "(")
		p.exprList(args)
		p.w(")")

	case "strpos":
		// POSITION(a IN b) arrives as strpos(b, a). Writing it back as
		// POSITION keeps the result column's default name ("position").
		if len(args) != 2 {
			p.fail(reasonFunctionForm)
			return
		}
		p.w("POSITION(")
		p.expr(args[1])
		p.w(" IN ")
		p.expr(args[0])
		p.w(")")

	case "substring", "btrim", "ltrim", "rtrim":
		// TRIM(... FROM x) arrives as btrim/ltrim/rtrim, which PostgreSQL
		// builds too; substring(x, from[, for]) is an ordinary pg_catalog
		// function.
		if len(args) == 0 {
			p.fail(reasonFunctionForm)
			return
		}
		p.w("pg_catalog." + name + "(")
		p.exprList(args)
		p.w(")")

	case "timezone":
		// x AT TIME ZONE z arrives as timezone(x, z), the reverse of
		// PostgreSQL's timezone(z, x); write the operator form back.
		if len(args) != 2 {
			p.fail(reasonFunctionForm)
			return
		}
		p.w("(")
		p.expr(args[0])
		p.w(" AT TIME ZONE ")
		p.expr(args[1])
		p.w(")")

	case "like_escape", "not_like_escape", "ilike_escape", "not_ilike_escape",
		"similar_to_escape", "not_similar_to_escape":
		if len(args) != 3 {
			p.fail(reasonFunctionForm)
			return
		}
		op := map[string]string{
			"like_escape": " LIKE ", "not_like_escape": " NOT LIKE ",
			"ilike_escape": " ILIKE ", "not_ilike_escape": " NOT ILIKE ",
			"similar_to_escape": " SIMILAR TO ", "not_similar_to_escape": " NOT SIMILAR TO ",
		}[name]
		p.w("(")
		p.expr(args[0])
		p.w(op)
		p.expr(args[1])
		p.w(" ESCAPE ")
		p.expr(args[2])
		p.w(")")

	case "json_remove_path", "inet_contained_by_or_equals", "inet_contains_or_equals":
		if len(args) != 2 {
			p.fail(reasonFunctionForm)
			return
		}
		op := map[string]string{
			"json_remove_path":            " #- ",
			"inet_contained_by_or_equals": " <<= ",
			"inet_contains_or_equals":     " >>= ",
		}[name]
		p.w("(")
		p.expr(args[0])
		p.w(op)
		p.expr(args[1])
		p.w(")")

	default:
		p.fail(reasonFunction)
	}
}

// args0Str returns the first argument as a string constant when args has n
// entries.
func args0Str(args tree.Exprs, n int) (string, bool) {
	if len(args) != n {
		return "", false
	}
	s, ok := args[0].(*tree.StrVal)
	if !ok {
		return "", false
	}
	return s.RawString(), true
}

func (p *printer) windowSpec(wd *tree.WindowDef) {
	if !p.enter() {
		return
	}
	defer p.leave()
	p.w("(")
	sep := ""
	if wd.RefName != "" {
		p.ident(string(wd.RefName))
		sep = " "
	}
	if len(wd.Partitions) > 0 {
		p.w(sep + "PARTITION BY ")
		p.exprList(wd.Partitions)
		sep = " "
	}
	if len(wd.OrderBy) > 0 {
		p.w(sep)
		p.orderBy(wd.OrderBy)
		sep = " "
	}
	if fr := wd.Frame; fr != nil {
		p.w(sep)
		switch fr.Mode {
		case tree.RANGE:
			p.w("RANGE ")
		case tree.ROWS:
			p.w("ROWS ")
		case tree.GROUPS:
			p.w("GROUPS ")
		default:
			p.fail(reasonUnsupported)
			return
		}
		if fr.Bounds.StartBound == nil {
			p.fail(reasonUnsupported)
			return
		}
		if fr.Bounds.EndBound != nil {
			p.w("BETWEEN ")
			p.frameBound(fr.Bounds.StartBound)
			p.w(" AND ")
			p.frameBound(fr.Bounds.EndBound)
		} else {
			p.frameBound(fr.Bounds.StartBound)
		}
		switch fr.Exclusion {
		case tree.NoExclusion:
		case tree.ExcludeCurrentRow:
			p.w(" EXCLUDE CURRENT ROW")
		case tree.ExcludeGroup:
			p.w(" EXCLUDE GROUP")
		case tree.ExcludeTies:
			p.w(" EXCLUDE TIES")
		default:
			p.fail(reasonUnsupported)
		}
	}
	p.w(")")
}

func (p *printer) frameBound(b *tree.WindowFrameBound) {
	switch b.BoundType {
	case tree.UnboundedPreceding:
		p.w("UNBOUNDED PRECEDING")
	case tree.UnboundedFollowing:
		p.w("UNBOUNDED FOLLOWING")
	case tree.CurrentRow:
		p.w("CURRENT ROW")
	case tree.OffsetPreceding, tree.OffsetFollowing:
		if b.OffsetExpr == nil {
			p.fail(reasonUnsupported)
			return
		}
		p.expr(b.OffsetExpr)
		if b.BoundType == tree.OffsetPreceding {
			p.w(" PRECEDING")
		} else {
			p.w(" FOLLOWING")
		}
	default:
		p.fail(reasonUnsupported)
	}
}

// ---- types ---------------------------------------------------------------

// String type OIDs, taken from the parser's own types so that this package
// needs no OID table of its own.
var (
	oidText    = types.String.Oid()
	oidVarchar = types.VarChar.Oid()
	oidBPChar  = types.MakeChar(1).Oid()
)

// pgTypeName returns the PostgreSQL spelling of a cast target, for a short
// list of scalar types and one-dimensional arrays of them. Everything else
// (reg* OID types that resolve catalog names, "char", name, bit strings,
// collated strings, interval fields, tuples) is refused.
func pgTypeName(t *types.T) (string, bool) {
	if t == nil {
		return "", false
	}
	if t.Family() == types.ArrayFamily {
		elem := t.ArrayContents()
		// int2vector and oidvector are arrays with their own OIDs.
		if elem == nil || elem.Family() == types.ArrayFamily || t.Oid() != types.MakeArray(elem).Oid() {
			return "", false
		}
		name, ok := pgTypeName(elem)
		if !ok {
			return "", false
		}
		return name + "[]", true
	}
	precision := func(base, suffix string) string {
		if t.InternalType.TimePrecisionIsSet || t.InternalType.Precision > 0 {
			return base + "(" + strconv.Itoa(int(t.Precision())) + ")" + suffix
		}
		return base + suffix
	}
	switch t.Family() {
	case types.BoolFamily:
		return "boolean", true
	case types.IntFamily:
		switch t.Width() {
		case 16:
			return "smallint", true
		case 32:
			return "integer", true
		case 64:
			return "bigint", true
		}
	case types.FloatFamily:
		switch t.Width() {
		case 32:
			return "real", true
		case 64:
			return "double precision", true
		}
	case types.DecimalFamily:
		switch {
		case t.Precision() > 0 && t.Scale() > 0:
			return "numeric(" + strconv.Itoa(int(t.Precision())) + "," + strconv.Itoa(int(t.Scale())) + ")", true
		case t.Precision() > 0:
			return "numeric(" + strconv.Itoa(int(t.Precision())) + ")", true
		case t.Scale() == 0:
			return "numeric", true
		}
	case types.StringFamily:
		switch t.Oid() {
		case oidText:
			return "text", true
		case oidVarchar:
			if t.Width() > 0 {
				return "varchar(" + strconv.Itoa(int(t.Width())) + ")", true
			}
			return "varchar", true
		case oidBPChar:
			if t.Width() > 0 {
				return "char(" + strconv.Itoa(int(t.Width())) + ")", true
			}
			return "bpchar", true
		}
	case types.BytesFamily:
		return "bytea", true
	case types.DateFamily:
		return "date", true
	case types.TimeFamily:
		return precision("time", ""), true
	case types.TimeTZFamily:
		return precision("time", " with time zone"), true
	case types.TimestampFamily:
		return precision("timestamp", ""), true
	case types.TimestampTZFamily:
		return precision("timestamp", " with time zone"), true
	case types.IntervalFamily:
		f := t.InternalType.IntervalDurationField
		if (f == nil || (f.DurationType == types.IntervalDurationType_UNSET && f.FromDurationType == types.IntervalDurationType_UNSET)) &&
			!t.InternalType.TimePrecisionIsSet && t.InternalType.Precision == 0 {
			return "interval", true
		}
	case types.UuidFamily:
		return "uuid", true
	case types.JsonFamily:
		return "jsonb", true
	case types.INetFamily:
		return "inet", true
	}
	return "", false
}
