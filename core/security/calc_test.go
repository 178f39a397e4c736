package security

import (
	"errors"
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	cases := []struct {
		expr string
		want string
		err  error
	}{
		{"2 * (3 + 4)", "14", nil},
		{"1 + 2 * 3", "7", nil},
		{"(1 + 2) * 3", "9", nil},
		{"10 / 4", "2.5", nil},
		{"0.1 + 0.2", "0.3", nil},
		{"1 / 3", "0.333333333333333", nil},
		{"-3 - -2", "-1", nil},
		{"+5", "5", nil},
		{"--5", "5", nil},
		{".5 + 5.", "5.5", nil},
		{"2 - 3 - 4", "-5", nil},
		{"8 / 2 / 2", "2", nil},
		{"1 / 0", "", ErrCalcDivByZero},
		{"1 / (2 - 2)", "", ErrCalcDivByZero},
		{"", "", ErrCalcEmpty},
		{"   ", "", ErrCalcEmpty},
		{"2 ** 8", "", ErrCalcSyntax},
		{"2 * * 8", "", ErrCalcSyntax},
		{"(1 + 2", "", ErrCalcSyntax},
		{"1 + 2)", "", ErrCalcSyntax},
		{"()", "", ErrCalcSyntax},
		{"1..2", "", ErrCalcSyntax},
		{"1 2", "", ErrCalcSyntax},
		{"1+1; import os", "", ErrCalcCharacters},
		{"__import__('os')", "", ErrCalcCharacters},
		{"`id`", "", ErrCalcCharacters},
		{"$(id)", "", ErrCalcCharacters},
		{"().__class__", "", ErrCalcCharacters},
		{"1e308 * 10", "", ErrCalcCharacters},
		{"2\n+2", "", ErrCalcCharacters},
		{"１+１", "", ErrCalcCharacters},
		{"0x10", "", ErrCalcCharacters},
		{strings.Repeat("9", 200) + " * " + strings.Repeat("9", 200), "", ErrCalcTooLong},
		{strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70), "", ErrCalcTooComplex},
		{strings.Repeat("-", 100) + "1", "", ErrCalcTooComplex},
		{strings.Repeat("1+", 150) + "1", "", ErrCalcTooComplex},
		{strings.Repeat("9", 65), "", ErrCalcTooComplex},
	}
	for _, tc := range cases {
		maxLen := 200
		if strings.HasPrefix(tc.expr, strings.Repeat("1+", 10)) {
			maxLen = 1000
		}
		got, err := Evaluate(tc.expr, maxLen)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%q: err = %v, want %v", tc.expr, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		if s := FormatRat(got); s != tc.want {
			t.Errorf("%q = %s, want %s", tc.expr, s, tc.want)
		}
	}
}

func TestEvaluateOverflow(t *testing.T) {
	big := strings.Repeat("9", 60)
	expr := big + "*" + big + "*" + big + "*" + big + "*" + big + "*" + big
	if _, err := Evaluate(expr, 1000); !errors.Is(err, ErrCalcOverflow) {
		t.Fatalf("got %v, want overflow", err)
	}
}

func TestCalcErrorsNeverQuoteInput(t *testing.T) {
	for _, expr := range []string{"1+1; import os", "2 ** 8", "(((", "1/0"} {
		_, err := Evaluate(expr, 200)
		if err == nil || strings.Contains(err.Error(), expr) {
			t.Errorf("%q: error %v", expr, err)
		}
	}
}

func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{"1+2", "2*(3+4)", "-(-1)/3", "((1))", "1/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Evaluate(s, 200)
		if err == nil && v == nil {
			t.Fatal("nil result without error")
		}
	})
}
