package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tsekh/tsekh/internal/app"
)

// asyncAPICmd prints the AsyncAPI document of the events, or a README with
// its table of event types rewritten: `make docs` runs both.
func asyncAPICmd(args []string, stdout, stderr io.Writer) error {
	fs := flags("asyncapi [--readme FILE]", "Prints the AsyncAPI 3.0 document of the events (served at /asyncapi.json,\ncommitted as docs/asyncapi.json). With --readme, prints FILE with the table of\nevent types between its markers rewritten instead. Needs no database.", stderr)
	readme := fs.String("readme", "", "print this Markdown file with its table of event types rewritten")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	if *readme == "" {
		doc, err := app.AsyncAPI()
		if err != nil {
			return err
		}
		_, err = stdout.Write(doc)
		return err
	}
	types, err := app.EventTypes()
	if err != nil {
		return err
	}
	old, err := os.ReadFile(*readme)
	if err != nil {
		return err
	}
	doc, err := app.ReplaceEventsTable(string(old), app.EventsTable(types))
	if err != nil {
		return fmt.Errorf("%s: %w", *readme, err)
	}
	_, err = io.WriteString(stdout, doc)
	return err
}
