// Command openapifix gives the OpenAPI 2.0 document swag writes (docs/) what
// swag cannot write itself, so that its parameters hold their whole contract
// and the document lints clean. Run by `make docs` after swag:
//
//		go run ./scripts/openapifix docs
//
//	  - Patterns: swag's @Param takes no pattern, and its attributes cannot
//	    hold the parentheses and commas of one. A parameter names its pattern
//	    with extensions(x-pattern=NAME); NAME becomes "pattern": the regular
//	    expression of patterns below.
//	  - Examples: swag writes a non-body parameter's example(...) as "example",
//	    which OpenAPI 2.0 has only in schemas; it becomes "x-example", which
//	    contract-test tools read for parameters.
//
// The files are edited line by line, as swag lays them out (one member a
// line), so that nothing else in them changes.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// patterns are the regular expressions parameters name with x-pattern
// (neither a quote nor a backslash in them: they go into JSON and YAML as
// they are).
var patterns = map[string]string{
	"ids":    `^[1-9][0-9]{0,18}(,[1-9][0-9]{0,18})*$`,
	"cursor": `^[A-Za-z0-9_-]+$`,
}

func main() {
	dir := "docs"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	for _, f := range []struct {
		name string
		fix  func([]string) ([]string, error)
	}{{"swagger.json", fixJSON}, {"docs.go", fixJSON}, {"swagger.yaml", fixYAML}} {
		path := filepath.Join(dir, f.name)
		b, err := os.ReadFile(path) //nolint:gosec // the docs folder the Makefile names
		if err == nil {
			var lines []string
			if lines, err = f.fix(strings.Split(string(b), "\n")); err == nil {
				err = os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644) //nolint:gosec // committed docs, readable by all
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "openapifix: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

var (
	jsonPattern = regexp.MustCompile(`^(\s*)"x-pattern": "([^"]*)"(,?)$`)
	yamlPattern = regexp.MustCompile(`^(\s*)x-pattern: (\S+)$`)
)

func pattern(name string) (string, error) {
	re, ok := patterns[name]
	if !ok {
		return "", fmt.Errorf("x-pattern %q names no pattern of openapifix", name)
	}
	return re, nil
}

// fixJSON edits swag's JSON (swagger.json, and the same text in docs.go):
// in the objects of a "parameters" array, at their own level, example
// becomes x-example; every x-pattern becomes its pattern.
func fixJSON(lines []string) ([]string, error) {
	inParams, depth := false, 0 // depth: of braces inside the parameters array
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if m := jsonPattern.FindStringSubmatch(l); m != nil {
			re, err := pattern(m[2])
			if err != nil {
				return nil, err
			}
			lines[i] = m[1] + `"pattern": "` + re + `"` + m[3]
			continue
		}
		switch {
		case !inParams && t == `"parameters": [`:
			inParams, depth = true, 0
			continue
		case !inParams:
			continue
		}
		if depth == 1 && strings.HasPrefix(t, `"example": `) {
			lines[i] = strings.Replace(l, `"example": `, `"x-example": `, 1)
		}
		depth += strings.Count(t, "{") + strings.Count(t, "[") - strings.Count(t, "}") - strings.Count(t, "]")
		if depth < 0 {
			inParams = false
		}
	}
	return lines, nil
}

// fixYAML edits swag's YAML: in the items of a parameters list, at their
// own level, example becomes x-example; every x-pattern becomes its
// pattern, quoted.
func fixYAML(lines []string) ([]string, error) {
	paramsIndent := -1 // the indentation of "parameters:", while in its list
	for i, l := range lines {
		if m := yamlPattern.FindStringSubmatch(l); m != nil {
			re, err := pattern(m[2])
			if err != nil {
				return nil, err
			}
			lines[i] = m[1] + "pattern: '" + re + "'"
			continue
		}
		t := strings.TrimLeft(l, " ")
		indent := len(l) - len(t)
		if t == "parameters:" {
			paramsIndent = indent
			continue
		}
		if paramsIndent < 0 || t == "" {
			continue
		}
		// swag lists the items at the key's own indentation: "- " then the
		// item's members two further in.
		switch {
		case indent < paramsIndent, indent == paramsIndent && !strings.HasPrefix(t, "- "):
			paramsIndent = -1
		case indent == paramsIndent && strings.HasPrefix(t, "- example: "):
			lines[i] = l[:indent] + "- x-example: " + strings.TrimPrefix(t, "- example: ")
		case indent == paramsIndent+2 && strings.HasPrefix(t, "example: "):
			lines[i] = l[:indent] + "x-example: " + strings.TrimPrefix(t, "example: ")
		}
	}
	return lines, nil
}
