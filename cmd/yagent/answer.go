package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/yagent/yagent/call/session"
)

// terminalAnswerer asks on the terminal when stdin is one (and is not
// carrying the call's input); nil otherwise, so asks fail closed.
func terminalAnswerer(stdin io.Reader, prompt io.Writer, stdinIsInput bool) session.Answerer {
	if stdinIsInput {
		return nil
	}
	f, ok := stdin.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return nil
	}
	return &ttyAnswerer{in: bufio.NewReader(f), out: prompt}
}

type ttyAnswerer struct {
	in  *bufio.Reader
	out io.Writer
}

func (t *ttyAnswerer) Approve(ctx context.Context, req session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	fmt.Fprintf(t.out, "\n%s asks: %s\n", req.Tool, req.Reason)
	for _, p := range req.Paths {
		fmt.Fprintf(t.out, "  path: %s\n", p)
	}
	if req.Command != "" {
		fmt.Fprintf(t.out, "  command: %s\n", req.Command)
	}
	for {
		fmt.Fprint(t.out, "Allow? [o]nce / [s]ession (this tool) / [a]ll tools this session / [p]roject / [n]o: ")
		line, err := t.readLine(ctx)
		if err != nil {
			return session.ApprovalAnswer{}, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "o", "once", "y", "yes":
			return session.ApprovalAnswer{Approved: true, Scope: "once"}, nil
		case "s", "session":
			return session.ApprovalAnswer{Approved: true, Scope: "session"}, nil
		case "a", "all":
			return session.ApprovalAnswer{Approved: true, Scope: session.ScopeAll}, nil
		case "p", "project":
			return session.ApprovalAnswer{Approved: true, Scope: "project"}, nil
		case "n", "no":
			fmt.Fprint(t.out, "Reason for the agent (optional): ")
			reason, err := t.readLine(ctx)
			if err != nil {
				return session.ApprovalAnswer{}, err
			}
			return session.ApprovalAnswer{Approved: false, Reason: strings.TrimSpace(reason)}, nil
		}
	}
}

func (t *ttyAnswerer) Help(ctx context.Context, question string) (string, error) {
	fmt.Fprintf(t.out, "\nThe agent asks: %s\n> ", question)
	line, err := t.readLine(ctx)
	return strings.TrimSpace(line), err
}

func (t *ttyAnswerer) readLine(ctx context.Context) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := t.in.ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case r := <-ch:
		if r.err != nil && !(errors.Is(r.err, io.EOF) && r.s != "") {
			return "", fmt.Errorf("read answer: %w", r.err)
		}
		return r.s, nil
	}
}
