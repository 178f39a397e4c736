package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"
)

// cellValues decodes the runner's cells to their JSON-ready values
// (numbers as json.Number), and checks that each cell is exactly the JSON
// encoding/json writes for that value: the form the port promises.
func cellValues(rows [][]json.RawMessage) ([][]any, error) {
	if rows == nil {
		return nil, nil
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = make([]any, len(r))
		for j, c := range r {
			dec := json.NewDecoder(bytes.NewReader(c))
			dec.UseNumber()
			if err := dec.Decode(&out[i][j]); err != nil {
				return nil, fmt.Errorf("cell %d,%d %q: %v", i, j, c, err)
			}
			want, err := json.Marshal(out[i][j])
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(c, want) {
				return nil, fmt.Errorf("cell %d,%d is %s, encoding/json writes %s", i, j, c, want)
			}
		}
	}
	return out, nil
}

// TestAppendJSONStringMatchesEncodingJSON holds the hand-written quoting to
// encoding/json, the oracle, over every byte alone and in context, every
// escape it knows, invalid UTF-8 and the characters it treats specially.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{"", "plain", `a"b\c`, "<script>&amp;</script>", "\u2028\u2029", "é\u202e\u200b\ufeff😀",
		"\xff", "a\xc3", "\xed\xa0\x80", "\x7f", "tab\there\nnl\rcr\bbs\fff\x00\x1f\x1b[31m"}
	for b := range 256 {
		inputs = append(inputs, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	for r := rune(0x70); r < 0x3000; r += 7 {
		inputs = append(inputs, string(r), "a"+string(r)+"\"")
	}
	for _, s := range inputs {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("prefix"), s); string(got) != "prefix"+string(want) {
			t.Errorf("%q: got %s, want %s", s, got[len("prefix"):], want)
		}
	}
}

// TestArenaCellIsCellValue holds the arena's direct paths to cellValue's
// mapping: same value (as JSON), size and cut, for the types it writes
// directly and a few it does not, around the cell bound.
func TestArenaCellIsCellValue(t *testing.T) {
	oids := []uint32{pgtype.Int4OID, pgtype.Int8OID, pgtype.Float8OID, pgtype.NumericOID, pgtype.BoolOID,
		pgtype.TextOID, pgtype.VarcharOID, pgtype.UUIDOID, pgtype.JSONBOID, pgtype.TimestamptzOID, pgtype.Int4ArrayOID, pgtype.ByteaOID}
	texts := []string{"", "0", "-12", "1.5e10", "NaN", "Infinity", "01", "t", "f", "true", "hello <world>", "é\u202e", "\xff\xfe",
		`{"b": 1, "a": [1, 2]}`, "2024-01-02 03:04:05.5+00", "{1,2,NULL}", `\x00ff`, strings.Repeat("9", 40), strings.Repeat("é", 30)}
	var a jsonArena
	for _, oid := range oids {
		for _, text := range texts {
			for _, maxBytes := range []int{1, 3, 8, 1000} {
				raw := []byte(text)
				wantV, wantN, wantCut := cellValue(oid, raw, maxBytes)
				want, err := json.Marshal(wantV)
				if err != nil {
					t.Fatal(err)
				}
				got, n, cut := a.cell(oid, raw, maxBytes)
				if !bytes.Equal(got, want) || n != wantN || cut != wantCut {
					t.Errorf("oid %d %q max %d: got %s %d %v, want %s %d %v", oid, text, maxBytes, got, n, cut, want, wantN, wantCut)
				}
				if cap(got) != len(got) {
					t.Errorf("oid %d %q: a cell's capacity reaches into the next", oid, text)
				}
			}
		}
		if got, n, _ := a.cell(oid, nil, 10); string(got) != "null" || n != 4 {
			t.Errorf("oid %d NULL: %s %d", oid, got, n)
		}
	}
	if !utf8.ValidString(string(a.buf)) {
		t.Error("the arena holds invalid UTF-8")
	}
}
