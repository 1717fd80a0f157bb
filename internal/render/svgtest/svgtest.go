// Package svgtest reads an SVG document into its elements, for tests that
// check what the Gantt chart draws.
package svgtest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
)

// Node is an element of an SVG document, with the classes of its ancestors
// and its own, the text of its <title> child and its own text.
type Node struct {
	Name    string
	Attr    map[string]string
	Classes []string // its ancestors' and its own, outermost first
	Title   string
	Text    string
	Parent  *Node
}

// In tells whether the node or one of its ancestors has the class.
func (n *Node) In(class string) bool { return slices.Contains(n.Classes, class) }

// Colors are the fill and stroke colours the node paints with, lower case.
func (n *Node) Colors() []string {
	var out []string
	for _, a := range []string{"fill", "stroke"} {
		if c := strings.ToLower(n.Attr[a]); c != "" && c != "none" {
			out = append(out, c)
		}
	}
	return out
}

// Parse reads the document with an XML decoder and returns its elements in
// document order; an error when it is not well-formed XML.
func Parse(body []byte) ([]*Node, error) {
	var all, stack []*Node
	dec := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) > 0 {
				return nil, errors.New("svgtest: the document ends inside <" + stack[len(stack)-1].Name + ">")
			}
			return all, nil
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &Node{Name: tok.Name.Local, Attr: map[string]string{}}
			for _, a := range tok.Attr {
				n.Attr[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				n.Parent = stack[len(stack)-1]
				n.Classes = slices.Clone(n.Parent.Classes)
			}
			if c := n.Attr["class"]; c != "" {
				n.Classes = append(n.Classes, c)
			}
			stack = append(stack, n)
			all = append(all, n)
		case xml.EndElement:
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n.Name == "title" && len(stack) > 0 {
				stack[len(stack)-1].Title = n.Text
			}
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(tok)
			}
		}
	}
}

// ByClass returns the nodes whose own class is class, in document order.
func ByClass(nodes []*Node, class string) []*Node {
	var out []*Node
	for _, n := range nodes {
		if n.Attr["class"] == class {
			out = append(out, n)
		}
	}
	return out
}
