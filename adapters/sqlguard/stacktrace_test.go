package sqlguard_test

import (
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/auxten/postgresql-parser/pkg/util/stacktrace"
)

// The parser's internal errors carry stack traces built by raven-go's
// NewStacktrace, which this build takes from shims/raven-go. The parser's
// own helpers must still record the caller, encode, decode and print.
func TestParserStackTracesWorkOnTheRavenStandIn(t *testing.T) {
	_, file, line, _ := runtime.Caller(0)
	st := stacktrace.NewStackTrace(0)
	if st == nil || len(st.Frames) == 0 {
		t.Fatal("no stack trace")
	}
	last := st.Frames[len(st.Frames)-1] // oldest first: the caller is last
	if last.AbsolutePath != file || last.Lineno != line+1 || !strings.HasSuffix(last.Function, "TestParserStackTracesWorkOnTheRavenStandIn") {
		t.Fatalf("innermost frame %+v, want %s:%d in this test", last, file, line+1)
	}
	if last.Module != "github.com/arrowhead-go/arrowhead/adapters/sqlguard_test" || last.InApp {
		t.Errorf("frame module %q in_app %v", last.Module, last.InApp)
	}
	for _, f := range st.Frames {
		if f.Module == "runtime" && f.Function == "goexit" {
			t.Error("the goroutine exit trampoline is recorded as a frame")
		}
		if f.ContextLine != "" || f.PreContext != nil {
			t.Error("a frame carries source lines: the stand-in must read no file")
		}
	}
	encoded, err := stacktrace.EncodeStackTrace(st)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := stacktrace.DecodeStackTrace(encoded)
	if err != nil || len(decoded.Frames) != len(st.Frames) || !reflect.DeepEqual(decoded.Frames[len(decoded.Frames)-1], last) {
		t.Fatalf("round trip: %v, %d frames", err, len(decoded.Frames))
	}
	printed := stacktrace.PrintStackTrace(decoded)
	want := file + ":" + strconv.Itoa(line+1) + ": in " + last.Function + "()\n"
	if !strings.HasPrefix(printed, want) {
		t.Errorf("printed trace starts %q, want %q", strings.SplitAfter(printed, "\n")[0], want)
	}
}
