package rt

import "testing"

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		want        string
	}{
		{0, 10, "\r[          ]   0% 0/10 tasks"},
		{5, 10, "\r[=====     ]  50% 5/10 tasks"},
		{12, 10, "\r[==========] 100% 10/10 tasks"},
	} {
		if got := progressLine(tc.done, tc.total, 10); got != tc.want {
			t.Errorf("progressLine(%d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}
