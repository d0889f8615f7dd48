package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/host/surface"
)

func newToolsCmd(g *globals) *cobra.Command {
	var all bool
	var format string
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools a client sees (--all: every tool, Cold ones too)",
		Args:  cobra.NoArgs,
		RunE: withApp(g, nil, func(cmd *cobra.Command, a *app.App, _ []string) error {
			var defs []surface.ToolDef
			if all {
				defs = a.Surface.All()
			} else {
				defs = a.Surface.List(session.New("cli"))
			}
			surface.SortToolDefs(defs)
			return writeDefs(cmd.OutOrStdout(), format, defs)
		}),
	}
	cmd.Flags().BoolVar(&all, "all", false, "list every tool, Cold ones included")
	cmd.Flags().StringVarP(&format, "format", "o", "table", "table, json, openai or anthropic")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"table", "json", "openai", "anthropic"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func writeDefs(w io.Writer, format string, defs []surface.ToolDef) error {
	hash := surface.ComputeToolDefsHash(defs)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	switch format {
	case "table":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tTIER\tFAMILY\tEFFECT\tBRIEF")
		for _, d := range defs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, d.Tier, d.Family, d.Effect, d.Brief)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "\n%d tools, defs hash %s\n", len(defs), hash)
		return err
	case "json":
		type jsonDef struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Brief       string          `json:"brief,omitempty"`
			Family      string          `json:"family"`
			Tier        string          `json:"tier"`
			Effect      string          `json:"effect"`
			Serial      bool            `json:"serial,omitempty"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		out := struct {
			Hash  string    `json:"defs_hash"`
			Tools []jsonDef `json:"tools"`
		}{Hash: hash}
		for _, d := range defs {
			out.Tools = append(out.Tools, jsonDef{d.Name, d.Description, d.Brief, d.Family, d.Tier.String(), string(d.Effect), d.Serial, d.InputSchema})
		}
		return enc.Encode(out)
	case "openai":
		type fn struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}
		type tool struct {
			Type     string `json:"type"`
			Function fn     `json:"function"`
		}
		out := make([]tool, 0, len(defs))
		for _, d := range defs {
			out = append(out, tool{"function", fn{d.Name, d.Description, d.InputSchema}})
		}
		return enc.Encode(out)
	case "anthropic":
		type tool struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		out := make([]tool, 0, len(defs))
		for _, d := range defs {
			out = append(out, tool{d.Name, d.Description, d.InputSchema})
		}
		return enc.Encode(out)
	}
	return fmt.Errorf("unknown format %q: use table, json, openai or anthropic", format)
}
