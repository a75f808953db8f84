package dashboard

import (
	"encoding/json"
	"strings"
	"testing"
)

// A span whose time is out of range (a timestamp of 1e308 microseconds, a negative or
// non-finite duration) is refused with an error naming the event, rather than becoming
// snapshots that cannot be encoded as JSON.
func TestFromTraceRefusesTimesOutOfRange(t *testing.T) {
	const head = `{"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"args":{"name":"workers"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"worker 0"}},
{"ph":"X","name":"T(0)","pid":1,"tid":1,"ts":0,"dur":5},`
	for _, bad := range []string{
		`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":1e308,"dur":5}`,
		`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":10,"dur":1e308}`,
		`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":10,"dur":-5}`,
		`{"ph":"X","name":"T(1)","pid":1,"tid":1,"ts":-1e308,"dur":5}`,
	} {
		snaps, err := FromTrace(strings.NewReader(head+bad+"]}"), "bad.json")
		if err == nil {
			// Without the check, the replay cannot be served: its snapshots hold +Inf or NaN.
			for _, s := range snaps {
				if _, jerr := json.Marshal(s); jerr != nil {
					t.Fatalf("%s: FromTrace accepted it, and its snapshot does not encode: %v", bad, jerr)
				}
			}
			t.Fatalf("%s: FromTrace accepted it", bad)
		}
		for _, want := range []string{"bad.json", "event 3", `"T(1)"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error %q does not mention %s", bad, err, want)
			}
		}
	}
}
