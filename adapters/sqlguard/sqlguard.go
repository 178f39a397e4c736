// Package sqlguard vets caller SQL for the sql_query tool. It implements
// ports.QueryVetter on github.com/auxten/postgresql-parser, whose grammar is
// CockroachDB's, and it never lets PostgreSQL see the caller's text.
//
// A statement passes three layers, each of which can refuse it:
//
//  1. A lexical pass that models PostgreSQL's lexer. It bounds length and
//     parenthesis depth before anything recursive runs; refuses the corners
//     where PostgreSQL's and CockroachDB's lexers disagree (dollar quoting,
//     U& escapes, E'...' and other prefixed literals, backslashes in
//     strings, nested comments, a carriage return inside a line comment,
//     non-ASCII outside quotes, psql meta-commands, a second statement);
//     drops comments; and rewrites named parameters into positional
//     placeholders.
//  2. The parser. Exactly one statement, and it must be a SELECT, a set
//     operation or VALUES.
//  3. A printer that walks the whole tree and writes plain PostgreSQL from
//     it. Every byte of the output comes from a node the printer understood
//     and approved: an unknown node, an unknown field, a function that is not
//     on the allowlist, a cast to a type outside a short list, a locking
//     clause or a data-modifying CTE is refused rather than skipped. The
//     printer quotes every identifier, parenthesizes every operator
//     expression, names pg_catalog for every function and writes string
//     literals without backslashes, so the text does not depend on
//     precedence tables, search_path or standard_conforming_strings. It
//     records every table the statement reads on the way.
//
// The library's own formatter is not used for the output: it writes
// CockroachDB dialect (STRING and BYTES types, current_date(),
// extract('year', x), INTERVAL literals without their type, IFNULL) that
// PostgreSQL rejects or reads differently.
//
// Named parameters are a colon followed by an identifier (:org, :Org and
// :org_2 are three names) anywhere outside strings, quoted identifiers and
// comments; "::" is a cast. The same name always maps to the same
// placeholder. An array slice with a named upper bound therefore needs a
// space: a[1 : n], not a[1:n].
//
// Every refusal is a *ports.SQLRefusal whose Reason is one of the fixed
// strings below: it never quotes the statement, an identifier, a function
// name or a parser message.
package sqlguard

import (
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/auxten/postgresql-parser/pkg/sql/parser"
	"github.com/auxten/postgresql-parser/pkg/sql/sem/tree"
	"github.com/auxten/postgresql-parser/pkg/sql/types"
)

// Defaults for a zero Config.
const (
	// DefaultMaxLength is ARROWHEAD_SQL_QUERY_MAX_LENGTH's default, in
	// characters.
	DefaultMaxLength = 2000
	// DefaultMaxDepth bounds parenthesis and bracket nesting.
	DefaultMaxDepth = 32
)

// Fixed structural bounds.
const (
	// maxTreeDepth bounds how deep the printer recurses into the parsed
	// tree. Parentheses are bounded before parsing, but operator chains
	// (NOT NOT ..., a || b || ...) nest without them.
	maxTreeDepth = 1000
	// maxIdentBytes is PostgreSQL's NAMEDATALEN-1. PostgreSQL silently
	// truncates longer identifiers, so a longer name would be authorized as
	// one table and read as another.
	maxIdentBytes = 63
)

// Config bounds what the vetter accepts. Zero or negative fields take the
// defaults.
type Config struct {
	// MaxLength is the longest statement accepted, in characters.
	MaxLength int
	// MaxDepth is the deepest parenthesis or bracket nesting accepted.
	MaxDepth int
}

// Vetter admits a single read-only SELECT and returns its PostgreSQL
// re-serialization. It holds no mutable state and is safe for concurrent
// use.
type Vetter struct {
	maxLength int
	maxDepth  int
}

var _ ports.QueryVetter = (*Vetter)(nil)

// New returns a Vetter with cfg's bounds.
func New(cfg Config) *Vetter {
	v := &Vetter{maxLength: cfg.MaxLength, maxDepth: cfg.MaxDepth}
	if v.maxLength <= 0 {
		v.maxLength = DefaultMaxLength
	}
	if v.maxDepth <= 0 {
		v.maxDepth = DefaultMaxDepth
	}
	return v
}

// Refusal reasons. They are the complete set of texts a caller can see; none
// is built from the input.
const (
	reasonEmpty            = "the SQL statement is empty"
	reasonTooLong          = "the SQL statement is too long"
	reasonEncoding         = "the SQL statement must be valid UTF-8 text without NUL or control characters"
	reasonNonASCII         = "characters outside ASCII are allowed only inside string literals and quoted identifiers"
	reasonTooDeep          = "the SQL statement nests too deeply"
	reasonUnbalanced       = "the SQL statement has unbalanced parentheses or brackets"
	reasonUnterminated     = "the SQL statement has an unterminated string, quoted identifier or comment"
	reasonMultiple         = "only a single SQL statement is allowed"
	reasonDollarQuote      = "dollar-quoted strings are not allowed"
	reasonPositional       = "positional parameters ($1) are not allowed; use named parameters such as :name"
	reasonParamName        = "a parameter name is longer than 63 characters"
	reasonUnicodeEscape    = "Unicode escape strings and identifiers (U&) are not allowed"
	reasonPrefixedString   = "prefixed string literals (E'', B'', X'', N'') are not allowed; separate a word from a string with a space"
	reasonBackslash        = "backslashes are not allowed in string literals"
	reasonAdjacentStrings  = "adjacent string literals are not allowed"
	reasonNestedComment    = "nested block comments are not allowed"
	reasonCommentEnd       = "a line comment may end only at a newline"
	reasonStrayCommentEnd  = "a comment terminator outside a comment is not allowed"
	reasonMetaCommand      = "backslash commands are not allowed"
	reasonBadNumber        = "a numeric literal must not run into a word; hexadecimal, octal, binary and underscore forms are not allowed"
	reasonTypeAnnotation   = "the ::: type annotation is not allowed"
	reasonFromOnly         = "FROM ONLY is not supported"
	reasonParse            = "the SQL statement could not be parsed"
	reasonNotSelect        = "only a read-only SELECT statement is allowed"
	reasonLocking          = "row-locking clauses (FOR UPDATE, FOR SHARE) are not allowed"
	reasonWritingCTE       = "only SELECT statements are allowed inside WITH"
	reasonDeniedFunction   = "a side-effecting, file, network or administrative function is not allowed"
	reasonFunction         = "a function that is not on the allowlist is not allowed"
	reasonQualifiedFunc    = "schema-qualified function names are allowed only for pg_catalog"
	reasonFunctionForm     = "this form of a function call is not allowed"
	reasonCastType         = "casts are allowed only to common scalar types and their arrays"
	reasonTableName        = "table and schema names must be lower-case identifiers (a-z, 0-9, _) of at most 63 characters, with at most a schema qualifier"
	reasonIdentifier       = "identifiers must be non-empty and at most 63 bytes"
	reasonColumnRef        = "column references may have at most three parts"
	reasonUnsupported      = "the SQL statement uses a construct that is not supported"
	reasonCockroachOnly    = "CockroachDB-only syntax is not allowed"
	reasonReserialization  = "the SQL statement could not be re-serialized safely"
	reasonStarArgument     = "only count(*) may take * as an argument"
	reasonAnyAllRightValue = "ANY, SOME and ALL need an array or a subquery"
)

func refuse(reason string) error { return &ports.SQLRefusal{Reason: reason} }

// Vet implements ports.QueryVetter.
func (v *Vetter) Vet(sql string) (q ports.VettedQuery, err error) {
	// vet is written not to panic (the fuzz target holds it to that); this
	// is the last line for a parser or printer bug: fail closed, quote
	// nothing.
	defer func() {
		if recover() != nil {
			q, err = ports.VettedQuery{}, refuse(reasonUnsupported)
		}
	}()
	return v.vet(sql)
}

func (v *Vetter) vet(sql string) (ports.VettedQuery, error) {
	// A rune is at most four bytes: this bounds the work before decoding.
	if len(sql) > utf8.UTFMax*v.maxLength {
		return ports.VettedQuery{}, refuse(reasonTooLong)
	}
	if !utf8.ValidString(sql) {
		return ports.VettedQuery{}, refuse(reasonEncoding)
	}
	if utf8.RuneCountInString(sql) > v.maxLength {
		return ports.VettedQuery{}, refuse(reasonTooLong)
	}
	lexed, err := lexInput(sql, v.maxDepth)
	if err != nil {
		return ports.VettedQuery{}, err
	}
	if lexed.empty {
		return ports.VettedQuery{}, refuse(reasonEmpty)
	}
	stmt, err := parseOne(lexed.sql)
	if err != nil {
		return ports.VettedQuery{}, err
	}
	p := printer{nparams: len(lexed.params)}
	p.buf = make([]byte, 0, len(lexed.sql)+len(lexed.sql)/2)
	switch ast := stmt.(type) {
	case *tree.Select:
		p.selectStmt(ast)
	case *tree.ParenSelect:
		p.selectBody(ast)
	default:
		return ports.VettedQuery{}, refuse(reasonNotSelect)
	}
	if p.err != nil {
		return ports.VettedQuery{}, p.err
	}
	out := string(p.buf)
	// The printer should only ever write text the lexical policy accepts;
	// checking costs one linear scan and catches a printer bug before
	// PostgreSQL sees it.
	if err := checkOutput(out, len(lexed.params)); err != nil {
		return ports.VettedQuery{}, refuse(reasonReserialization)
	}
	return ports.VettedQuery{SQL: out, Params: lexed.params, Tables: p.tables}, nil
}

// parseOne parses sql and returns its only statement. The parser reads a
// naked INT as INT4, as PostgreSQL does.
func parseOne(sql string) (ast tree.Statement, err error) {
	defer func() {
		if recover() != nil {
			ast, err = nil, refuse(reasonParse)
		}
	}()
	var p parser.Parser
	stmts, perr := p.ParseWithInt(sql, types.Int4)
	if perr != nil {
		// The parser's message quotes the input: never pass it on.
		return nil, refuse(reasonParse)
	}
	switch len(stmts) {
	case 0:
		return nil, refuse(reasonEmpty)
	case 1:
		return stmts[0].AST, nil
	default:
		return nil, refuse(reasonMultiple)
	}
}
