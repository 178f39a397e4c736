package coretools

import (
	"context"
	"errors"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/security"
)

// Calculate declares the calculate tool: arithmetic only, never code.
func Calculate(d Deps) catalog.ToolSpec {
	maxLen := d.Settings.ExpressionMaxLength
	return catalog.MustTool(catalog.ToolDef{
		Name:        "calculate",
		Family:      catalog.FamilyCore,
		Scope:       "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 120},
		Description: "Evaluate arithmetic with + - * / and parentheses. Example: calculate(expression=\"2 * (3 + 4)\") returns 14.",
		Input: catalog.Object(map[string]*catalog.Schema{
			"expression": catalog.String("Arithmetic expression.", maxLen),
		}, "expression"),
		Output: catalog.Object(map[string]*catalog.Schema{
			"result": catalog.Number("The value as a JSON number."),
			"text":   catalog.String("The value as exact decimal text.", 0),
		}, "result", "text"),
		Annotations: catalog.Annotations{Title: "Calculate", ReadOnly: true, Idempotent: true},
		Handler: func(_ context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				Expression string `json:"expression"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			v, err := security.Evaluate(args.Expression, maxLen)
			if err != nil {
				return catalog.Result{}, calcRefusal(err)
			}
			f, _ := v.Float64()
			text := security.FormatRat(v)
			return catalog.Result{
				Structured: map[string]any{"result": f, "text": text},
				Text:       text,
			}, nil
		},
	})
}

func calcRefusal(err error) error {
	switch {
	case errors.Is(err, security.ErrCalcDivByZero), errors.Is(err, security.ErrCalcOverflow),
		errors.Is(err, security.ErrCalcEmpty), errors.Is(err, security.ErrCalcTooLong),
		errors.Is(err, security.ErrCalcCharacters), errors.Is(err, security.ErrCalcSyntax),
		errors.Is(err, security.ErrCalcTooComplex):
		return catalog.Refuse(catalog.KindValidation, capitalized(err)+".")
	}
	return err
}

func capitalized(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
