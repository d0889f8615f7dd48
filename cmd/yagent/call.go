package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/sdk"
)

func newCallCmd(g *globals) *cobra.Command {
	var asJSON, progress bool
	cmd := &cobra.Command{
		Use:               "call TOOL [JSON|-]",
		Short:             "Call one tool with JSON input (from the argument, or - for stdin)",
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: completeTools(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			input := []byte("{}")
			if len(args) == 2 {
				if args[1] == "-" {
					b, err := io.ReadAll(cmd.InOrStdin())
					if err != nil {
						return fmt.Errorf("read input: %w", err)
					}
					input = b
				} else {
					input = []byte(args[1])
				}
			}
			a, err := openApp(cmd, g)
			if err != nil {
				return err
			}
			defer a.Close(ctx)
			sess := session.New("cli")
			sess.SetClient("cli")
			if ans := terminalAnswerer(cmd.InOrStdin(), cmd.ErrOrStderr(), len(args) == 2 && args[1] == "-"); ans != nil {
				sess.SetAnswerer(ans)
			}
			if !cmd.Flags().Changed("progress") {
				progress = isTerminal(cmd.ErrOrStderr())
			}
			if progress {
				id := uuid.NewString()
				ctx = adapter.WithCallID(ctx, id)
				defer a.Bus.Tap(printProgress(cmd.ErrOrStderr(), id))()
			}
			res := a.Surface.Call(ctx, sess, args[0], json.RawMessage(input))
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(res); err != nil {
					return err
				}
			} else {
				fmt.Fprint(out, res.Text)
				if !strings.HasSuffix(res.Text, "\n") {
					fmt.Fprintln(out)
				}
			}
			if res.IsError() {
				return &exitError{code: 2, err: errors.New(res.Code)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole result envelope as JSON")
	cmd.Flags().BoolVar(&progress, "progress", false, "print the call's progress on stderr (default: when stderr is a terminal)")
	return cmd
}

// printProgress is a bus tap printing the progress of call id on w, a line
// each.
func printProgress(w io.Writer, id string) func(bus.Event) {
	return func(ev bus.Event) {
		p, ok := ev.Payload.(sdk.Progress)
		if ev.Type != bus.ToolProgress || ev.CallID != id || !ok {
			return
		}
		line := p.Message
		if p.Total > 0 {
			line = fmt.Sprintf("[%g/%g] %s", p.Progress, p.Total, line)
		}
		fmt.Fprintf(w, "yagent: %s: %s\n", ev.Tool, line)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
