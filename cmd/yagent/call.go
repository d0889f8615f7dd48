package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/session"
)

func newCallCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "call TOOL [JSON|-]",
		Short: "Call one tool with JSON input (from the argument, or - for stdin)",
		Args:  cobra.RangeArgs(1, 2),
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
			if ans := terminalAnswerer(cmd.InOrStdin(), cmd.ErrOrStderr(), len(args) == 2 && args[1] == "-"); ans != nil {
				sess.SetAnswerer(ans)
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
	return cmd
}
