package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
)

const subscribersSummary = `Lists the subscribers with their status and lag, replays the journal to one
subscriber from an event id (as POST /api/v1/subscribers/{name}/replay does),
or retires a subscriber that is gone for good (DELETE /api/v1/subscribers/{name}).
Replays and retirements are journalled under the administrator, or under the
user given with --user.

  tsekh subscribers list
  tsekh subscribers replay NAME --from EVENT_ID [--user ID]
  tsekh subscribers retire NAME [--user ID]`

func subscribersCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flags("subscribers list | replay NAME --from N | retire NAME", subscribersSummary, stderr)
	if len(args) == 0 {
		fs.Usage()
		return errUsage
	}
	if args[0] == "-h" || args[0] == "--help" {
		fs.Usage()
		return nil
	}
	verb, rest := args[0], args[1:]
	var name string
	if verb == "replay" || verb == "retire" {
		if len(rest) == 0 || rest[0] == "" || rest[0][0] == '-' {
			fs.Usage()
			return errUsage
		}
		name, rest = rest[0], rest[1:]
	}
	from := fs.Int64("from", 0, "replay: the first event id to deliver again")
	userID := fs.Int64("user", 0, "the id of the user the command acts as (default: the administrator)")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	switch verb {
	case "list", "replay", "retire":
	default:
		fs.Usage()
		return errUsage
	}
	if verb == "replay" && *from < 1 {
		_, _ = fmt.Fprintln(stderr, "tsekh subscribers replay: --from must be an event id, 1 or more")
		return errUsage
	}
	a, err := openApp(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = a.Close() }()
	if verb == "list" {
		subs, err := a.Journal.Subscribers(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(w, "NAME\tSTATUS\tPENDING\tRETRYING\tHELD\tFAILED\tLAG")
		for _, s := range subs {
			_, _ = fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%.1fs\n", s.Name, s.Status, s.Pending, s.Retrying, s.Held, s.Failed, s.LagSeconds)
		}
		return w.Flush()
	}
	if ctx, err = actAs(ctx, a, *userID); err != nil {
		return err
	}
	if verb == "retire" {
		if err := a.Journal.Retire(ctx, name); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(stdout, "retired %s\n", name)
		return nil
	}
	if _, err := a.Journal.Replay(ctx, name, *from); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(stdout, "%s receives the journal again from event %d on\n", name, *from)
	return nil
}
