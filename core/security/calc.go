// Package security holds the pure guards: the arithmetic evaluator, path
// validation, the SSRF address policy, the secret scanner and the search
// matcher. Nothing here touches the network or the filesystem.
package security

import (
	"errors"
	"math"
	"math/big"
	"strings"
)

// Calculator limits. Length is configurable (ARROWHEAD_EXPRESSION_MAX_LENGTH);
// the structural bounds are fixed.
const (
	// MaxCalcNodes bounds the number of numbers and operators in one
	// expression.
	MaxCalcNodes = 256
	// MaxCalcDepth bounds parenthesis and unary-sign nesting.
	MaxCalcDepth = 64
	// MaxCalcDigits bounds the digits of one numeric literal.
	MaxCalcDigits = 64
)

// Calculator errors. Their text is caller-safe: none quotes the expression.
var (
	ErrCalcEmpty      = errors.New("the expression is empty")
	ErrCalcTooLong    = errors.New("the expression is too long")
	ErrCalcCharacters = errors.New("the expression may contain only digits, + - * / ( ) . and spaces")
	ErrCalcSyntax     = errors.New("the expression is not valid arithmetic: numbers joined by + - * / with parentheses (no powers or functions)")
	ErrCalcTooComplex = errors.New("the expression is too complex")
	ErrCalcDivByZero  = errors.New("division by zero")
	ErrCalcOverflow   = errors.New("the result is too large")
)

// Evaluate computes an arithmetic expression of numbers, + - * /, unary
// signs and parentheses. It is two independent layers: a character
// allowlist, then a recursive-descent parser that knows nothing but those
// forms and evaluates with exact rational arithmetic. Nothing is ever
// evaluated as code.
func Evaluate(expr string, maxLen int) (*big.Rat, error) {
	if len(expr) > maxLen {
		return nil, ErrCalcTooLong
	}
	if strings.TrimSpace(expr) == "" {
		return nil, ErrCalcEmpty
	}
	for i := 0; i < len(expr); i++ {
		if !allowedCalcByte(expr[i]) {
			return nil, ErrCalcCharacters
		}
	}
	p := calcParser{src: expr}
	v, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return nil, ErrCalcSyntax
	}
	f, _ := v.Float64()
	if math.IsInf(f, 0) {
		return nil, ErrCalcOverflow
	}
	return v, nil
}

func allowedCalcByte(c byte) bool {
	switch {
	case c >= '0' && c <= '9':
		return true
	case c == '+', c == '-', c == '*', c == '/', c == '(', c == ')', c == '.', c == ' ', c == '\t':
		return true
	}
	return false
}

// calcParser is a recursive-descent parser over the grammar
//
//	expr   = term { ("+" | "-") term }
//	term   = unary { ("*" | "/") unary }
//	unary  = ("+" | "-") unary | primary
//	primary = number | "(" expr ")"
type calcParser struct {
	src   string
	pos   int
	nodes int
}

func (p *calcParser) skipSpace() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *calcParser) node() error {
	p.nodes++
	if p.nodes > MaxCalcNodes {
		return ErrCalcTooComplex
	}
	return nil
}

func (p *calcParser) expr(depth int) (*big.Rat, error) {
	left, err := p.term(depth)
	if err != nil {
		return nil, err
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || (p.src[p.pos] != '+' && p.src[p.pos] != '-') {
			return left, nil
		}
		op := p.src[p.pos]
		p.pos++
		if err := p.node(); err != nil {
			return nil, err
		}
		right, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		if op == '+' {
			left = new(big.Rat).Add(left, right)
		} else {
			left = new(big.Rat).Sub(left, right)
		}
		if err := checkMagnitude(left); err != nil {
			return nil, err
		}
	}
}

func (p *calcParser) term(depth int) (*big.Rat, error) {
	left, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || (p.src[p.pos] != '*' && p.src[p.pos] != '/') {
			return left, nil
		}
		op := p.src[p.pos]
		p.pos++
		if err := p.node(); err != nil {
			return nil, err
		}
		right, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		if op == '*' {
			left = new(big.Rat).Mul(left, right)
		} else {
			if right.Sign() == 0 {
				return nil, ErrCalcDivByZero
			}
			left = new(big.Rat).Quo(left, right)
		}
		if err := checkMagnitude(left); err != nil {
			return nil, err
		}
	}
}

// checkMagnitude keeps intermediate values within float64 range so a chain
// of multiplications cannot grow without bound.
func checkMagnitude(r *big.Rat) error {
	if f, _ := r.Float64(); math.IsInf(f, 0) {
		return ErrCalcOverflow
	}
	return nil
}

func (p *calcParser) unary(depth int) (*big.Rat, error) {
	if depth > MaxCalcDepth {
		return nil, ErrCalcTooComplex
	}
	p.skipSpace()
	if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
		op := p.src[p.pos]
		p.pos++
		if err := p.node(); err != nil {
			return nil, err
		}
		v, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		if op == '-' {
			return new(big.Rat).Neg(v), nil
		}
		return v, nil
	}
	return p.primary(depth)
}

func (p *calcParser) primary(depth int) (*big.Rat, error) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return nil, ErrCalcSyntax
	}
	if p.src[p.pos] == '(' {
		p.pos++
		if err := p.node(); err != nil {
			return nil, err
		}
		v, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return nil, ErrCalcSyntax
		}
		p.pos++
		return v, nil
	}
	return p.number()
}

func (p *calcParser) number() (*big.Rat, error) {
	start := p.pos
	digits, dots := 0, 0
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c >= '0' && c <= '9' {
			digits++
		} else if c == '.' {
			dots++
		} else {
			break
		}
		p.pos++
	}
	if digits == 0 || dots > 1 {
		return nil, ErrCalcSyntax
	}
	if digits > MaxCalcDigits {
		return nil, ErrCalcTooComplex
	}
	if err := p.node(); err != nil {
		return nil, err
	}
	lit := p.src[start:p.pos]
	if strings.HasSuffix(lit, ".") {
		lit += "0"
	}
	if strings.HasPrefix(lit, ".") {
		lit = "0" + lit
	}
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		return nil, ErrCalcSyntax
	}
	return r, nil
}

// FormatRat renders r exactly when it is an integer or a short decimal, and
// otherwise rounded to 15 significant digits.
func FormatRat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	if s, exact := r.FloatPrec(); exact && s <= 15 {
		return trimZeros(r.FloatString(s))
	}
	f, _ := r.Float64()
	return trimZeros(big.NewFloat(f).Text('g', 15))
}

func trimZeros(s string) string {
	if strings.ContainsAny(s, "eE") || !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
