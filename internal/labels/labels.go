// Package labels makes the printable labels of a production order's parts
// and of a cutting plan's sheets (PDF or ZPL, drawn by package render from
// what floor and cutplan know): at once, for a request, or as a background
// job (JobKind) whose document the job keeps, for a client that would
// rather not hold a request open while thousands of labels are drawn.
package labels

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tsekh/tsekh/internal/cutplan"
	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/jobs"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/render"
)

// JobKind is the kind of the job that makes labels
// (GET …/labels with Prefer: respond-async).
const JobKind = "labels"

// Media types of the documents.
const (
	MIMEApplicationPDF = "application/pdf"
	// MIMEApplicationZPL is ZPL II, the language of Zebra-compatible
	// thermal label printers.
	MIMEApplicationZPL = "application/zpl"
)

// Request names whose labels (a production order's, or a cutting plan's,
// all its sheets or one) and how they are drawn; it is a labels job's
// input.
type Request struct {
	ProdOrderID   int64  `json:"prod_order_id,omitempty"`
	CuttingPlanID int64  `json:"cutting_plan_id,omitempty"`
	Sheet         int    `json:"sheet,omitempty"` // a cutting plan's one sheet; 0 for all
	Format        string `json:"format"`          // render.FormatPDF or render.FormatZPL
	Layout        string `json:"layout,omitempty"`
	DPI           int    `json:"dpi,omitempty"`
}

// Service makes labels.
type Service struct {
	floor *floor.Service
	cuts  *cutplan.Service
	size  render.LabelSize
}

// NewService returns the labels of floor's parts and cuts' plans, of the
// size given.
func NewService(f *floor.Service, c *cutplan.Service, size render.LabelSize) *Service {
	return &Service{floor: f, cuts: c, size: size}
}

// Check refuses what Make would refuse of the request without drawing a
// label: options the format does not take, an unknown production order or
// cutting plan (ENOTFOUND), a sheet the plan does not have.
func (s *Service) Check(ctx context.Context, req Request) error {
	if err := render.CheckLabelOptions(req.Format, s.options(req)); err != nil {
		return err
	}
	if req.CuttingPlanID != 0 {
		_, err := s.plan(ctx, req)
		return err
	}
	_, err := s.floor.LabelParts(ctx, req.ProdOrderID)
	return err
}

// Make draws the labels the request names and returns them as a document,
// with how many labels it holds.
func (s *Service) Make(ctx context.Context, req Request) (jobs.Document, int, error) {
	labels, name, err := s.labels(ctx, req)
	if err != nil {
		return jobs.Document{}, 0, err
	}
	return s.Render(labels, name, req)
}

// RunJob is the jobs.Handler of JobKind: the labels drawn and kept as the
// job's document, the job done with {"labels": n, "bytes": size}.
func (s *Service) RunJob(ctx context.Context, j jobs.Job, p *jobs.Progress) error {
	var req Request
	if err := json.Unmarshal(j.Input, &req); err != nil {
		return fmt.Errorf("labels: job %d: input: %w", j.ID, err)
	}
	if err := p.Report(ctx, 0, "reading the parts"); err != nil {
		return err
	}
	labels, name, err := s.labels(ctx, req)
	if err != nil {
		return err
	}
	if err := p.Report(ctx, 0.2, fmt.Sprintf("drawing %d labels", len(labels))); err != nil {
		return err
	}
	doc, n, err := s.Render(labels, name, req)
	if err != nil {
		return err
	}
	return p.FinishDocument(ctx, map[string]int64{"labels": int64(n), "bytes": int64(len(doc.Body))}, doc)
}

// Render draws the labels given as the request says (its format, layout
// and dpi) into a document named name (without its extension).
func (s *Service) Render(labels []render.Label, name string, req Request) (jobs.Document, int, error) {
	doc, err := render.Labels(labels, req.Format, s.options(req))
	if err != nil {
		return jobs.Document{}, 0, err
	}
	if req.Format == render.FormatZPL {
		return jobs.Document{MediaType: MIMEApplicationZPL, Filename: name + ".zpl", Body: doc}, len(labels), nil
	}
	layout := req.Layout
	if layout == "" {
		layout = render.LayoutLabel
	}
	return jobs.Document{MediaType: MIMEApplicationPDF, Filename: name + "-" + layout + ".pdf", Body: doc}, len(labels), nil
}

func (s *Service) options(req Request) render.LabelOptions {
	return render.LabelOptions{Layout: req.Layout, Size: s.size, DPI: req.DPI}
}

// labels are the labels the request names, and the document's name
// without its extension.
func (s *Service) labels(ctx context.Context, req Request) ([]render.Label, string, error) {
	if req.CuttingPlanID == 0 {
		parts, err := s.floor.LabelParts(ctx, req.ProdOrderID)
		if err != nil {
			return nil, "", err
		}
		out := make([]render.Label, len(parts))
		for i, p := range parts {
			out[i] = render.PartLabelOf(p).Label()
		}
		return out, fmt.Sprintf("labels-%d", req.ProdOrderID), nil
	}
	p, err := s.plan(ctx, req)
	if err != nil {
		return nil, "", err
	}
	// the details of the parts on the sheets asked for, per production order
	parts := map[int64]floor.Part{}
	orders := map[int64]bool{}
	for _, sh := range p.SheetList {
		for _, sp := range sh.Parts {
			if (req.Sheet == 0 || sh.N == req.Sheet) && !orders[sp.ProdOrderID] {
				orders[sp.ProdOrderID] = true
				fps, err := s.floor.LabelParts(ctx, sp.ProdOrderID)
				if err != nil {
					return nil, "", err
				}
				for _, fp := range fps {
					parts[fp.ID] = fp
				}
			}
		}
	}
	name := fmt.Sprintf("cutting-plan-%d-labels", p.ID)
	if req.Sheet > 0 {
		name = fmt.Sprintf("cutting-plan-%d-sheet-%d-labels", p.ID, req.Sheet)
	}
	return render.CutPlanLabels(p, parts, req.Sheet), name, nil
}

// plan is the cutting plan the request names, with the sheet it names.
func (s *Service) plan(ctx context.Context, req Request) (cutplan.Plan, error) {
	p, err := s.cuts.Get(ctx, req.CuttingPlanID)
	if err != nil {
		return p, err
	}
	if req.Sheet > len(p.SheetList) {
		return p, apperr.Invalid("invalid query", apperr.Field("sheet", "plan %d has %d sheets", p.ID, len(p.SheetList)))
	}
	return p, nil
}
