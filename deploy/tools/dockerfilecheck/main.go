// Command dockerfilecheck parses a Dockerfile with BuildKit's own parser
// and instruction reader, and fails on a syntax error, an instruction it
// cannot read (a bad flag, a malformed JSON form) or a lint warning: the
// part of the image build that needs no Docker engine, for machines that
// have none.
//
//	go run ./dockerfilecheck ../Dockerfile
package main

import (
	"fmt"
	"os"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dockerfilecheck Dockerfile")
		os.Exit(2)
	}
	if err := check(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "dockerfilecheck:", err)
		os.Exit(1)
	}
}

func check(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var problems []string
	for _, w := range res.Warnings {
		problems = append(problems, fmt.Sprintf("%s:%d: %s", path, w.Location.Start.Line, w.Short))
	}
	lint := linter.New(&linter.Config{Warn: func(rule, _, _, msg string, loc []parser.Range) {
		line := 0
		if len(loc) > 0 {
			line = loc[0].Start.Line
		}
		problems = append(problems, fmt.Sprintf("%s:%d: %s (%s)", path, line, msg, rule))
	}})
	stages, _, err := instructions.Parse(res.AST, lint)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p)
		}
		return fmt.Errorf("%d problem(s)", len(problems))
	}
	n := 0
	for _, s := range stages {
		n += len(s.Commands)
	}
	fmt.Printf("dockerfilecheck: %s: %d stages, %d instructions read\n", path, len(stages), n)
	return nil
}
