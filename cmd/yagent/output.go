package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Output formats of -o/--output: text for people, json for scripts.
const (
	outputText = "text"
	outputJSON = "json"
)

// outputFlag gives cmd -o/--output, text or json, stored in out.
func outputFlag(cmd *cobra.Command, out *string) {
	cmd.Flags().StringVarP(out, "output", "o", outputText, "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{outputText, outputJSON}, cobra.ShellCompDirectiveNoFileComp))
}

// checkOutput refuses an -o value that is not a format.
func checkOutput(o string) error {
	if o != outputText && o != outputJSON {
		return fmt.Errorf("-o %q is not an output format: give text or json", o)
	}
	return nil
}

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
