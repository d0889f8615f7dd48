package tools

import (
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestType_Pickers: browser_type sets a date, time, datetime-local, month,
// week, color or range input by value, firing input and change as a
// user's pick does, so the form submits it; each renders as one line with
// its value (not its parts), and a fieldset's legend shows once. A value
// the input does not take is refused with the form it wants. Red on the
// typing that reported success and left a date empty.
func TestType_Pickers(t *testing.T) {
	c := browser(t)
	c.open("/picks")
	picks := []struct{ name, value, line string }{
		{"dob", "2024-01-31", `date "Birthday"`},
		{"alarm", "07:30", `time "Alarm"`},
		{"meet", "2024-01-31T09:15", `datetime "Meeting"`},
		{"month", "2024-02", `datetime "Month"`},
		{"week", "2024-W05", `datetime "Week"`},
		{"color", "#ff8800", `color "Color"`},
		{"vol", "7", `slider "Volume"`},
	}
	for _, p := range picks {
		res := c.ok(TypeName, map[string]any{"selector": "input[name=" + p.name + "]", "text": p.value})
		if !strings.Contains(res.Text, "to "+p.value+".") {
			t.Errorf("%s: %q, want it set to %s", p.name, strings.SplitN(res.Text, "\n", 2)[0], p.value)
		}
	}
	snap := c.ok(SnapshotName, map[string]any{}).Text
	for _, p := range picks {
		if !strings.Contains(snap, p.line) || !strings.Contains(snap, "]: "+p.value+"\n") {
			t.Errorf("%s does not render as one line %s with %s:\n%s", p.name, p.line, p.value, snap)
		}
	}
	for _, not := range []string{"spinbutton", "Show date picker", "Legend"} {
		if strings.Contains(snap, not) {
			t.Errorf("the snapshot shows %q:\n%s", not, snap)
		}
	}
	if !strings.Contains(snap, "changed: dob,alarm,meet,month,week,color,vol") {
		t.Errorf("the page saw no change event for each:\n%s", snap)
	}
	for in, form := range map[string]string{"dob": "YYYY-MM-DD", "color": "#rrggbb", "vol": "a number from 0 to 10"} {
		te := c.fails(TypeName, map[string]any{"selector": "input[name=" + in + "]", "text": "soon"}, sdk.CodeInvalidInput)
		if !strings.Contains(te.Message, form) {
			t.Errorf("%s = soon: %q, want the form %s named", in, te.Message, form)
		}
	}
	c.ok(ClickName, map[string]any{"selector": "button[type=submit]"})
	c.ok(WaitForName, map[string]any{"text": "dob="})
	got := c.ok(SnapshotName, map[string]any{}).Text
	for _, want := range []string{"dob=2024-01-31", "alarm=07%3A30", "meet=2024-01-31T09%3A15", "month=2024-02", "week=2024-W05", "color=%23ff8800", "vol=7"} {
		if !strings.Contains(got, want) {
			t.Errorf("the form sent no %s:\n%s", want, got)
		}
	}
}
