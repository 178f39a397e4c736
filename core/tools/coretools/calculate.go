package coretools

import (
	"context"
	"errors"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/security"
)

type calculateInput struct {
	Expression string `json:"expression" description:"Arithmetic expression." maxLength:"$expression"`
}

type calculateOutput struct {
	Result float64 `json:"result" description:"The value as a JSON number."`
	Text   string  `json:"text" description:"The value as exact decimal text."`
}

// calculate defines the calculate tool: arithmetic only, never code;
// "$expression" is the family's ARROWHEAD_EXPRESSION_MAX_LENGTH bound.
var calculate = catalog.Define[calculateInput, calculateOutput](catalog.ToolDef{
	Name:        "calculate",
	Scope:       "tools:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 120},
	Description: "Evaluate arithmetic with + - * / and parentheses. Example: calculate(expression=\"2 * (3 + 4)\") returns 14.",
	Annotations: catalog.Annotations{Title: "Calculate", ReadOnly: true, Idempotent: true},
})

func (c *server) calculate(_ context.Context, _ catalog.Call, in calculateInput) (*catalog.Reply[calculateOutput], error) {
	v, err := security.Evaluate(in.Expression, c.config.ExpressionMaxLength)
	if err != nil {
		return nil, calcRefusal(err)
	}
	f, _ := v.Float64()
	text := security.FormatRat(v)
	return catalog.Answer(calculateOutput{Result: f, Text: text}, text), nil
}

func calcRefusal(err error) error {
	switch {
	case errors.Is(err, security.ErrCalcDivByZero), errors.Is(err, security.ErrCalcOverflow),
		errors.Is(err, security.ErrCalcEmpty), errors.Is(err, security.ErrCalcTooLong),
		errors.Is(err, security.ErrCalcCharacters), errors.Is(err, security.ErrCalcSyntax),
		errors.Is(err, security.ErrCalcTooComplex):
		return catalog.Refuse(catalog.KindValidation, catalog.Sentence(err.Error()))
	}
	return err
}
