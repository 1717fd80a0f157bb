package catalog

import (
	"context"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
)

// Demo route names, as on the journal screen of the system tsekh replaces.
const (
	DemoRouteCase        = "Корпус ЛДСП (типовой)"
	DemoRouteUpholstered = "Мягкая мебель (типовой)"
)

var fiveDays = IntList{1, 2, 3, 4, 5}

var demoHolidays = StringList{"2026-12-31", "2027-01-01", "2027-01-02", "2027-01-07", "2027-02-23", "2027-03-08", "2027-05-01", "2027-05-09"}

// demoWorkCenters: a small case-furniture shop and an upholstery shop.
var demoWorkCenters = []WorkCenter{
	{Code: "CUT", Name: "Раскрой (форматно-раскроечный станок)", CapacityMinPerDay: 960},
	{Code: "EDGE", Name: "Кромкооблицовка", CapacityMinPerDay: 960},
	{Code: "DRILL", Name: "Присадка (сверлильно-присадочный станок)", CapacityMinPerDay: 480},
	{Code: "ASM", Name: "Сборка корпусной мебели", CapacityMinPerDay: 960},
	{Code: "SEW", Name: "Раскрой и пошив ткани", CapacityMinPerDay: 480},
	{Code: "UPH", Name: "Обивка и сборка мягкой мебели", CapacityMinPerDay: 960},
	{Code: "PACK", Name: "Упаковка", CapacityMinPerDay: 480},
}

type demoOp struct {
	name, center, scope string
	minutes             float64
}

var demoRoutes = []struct {
	name, kind string
	ops        []demoOp
}{
	{DemoRouteCase, KindCase, []demoOp{
		{"Раскрой ЛДСП", "CUT", ScopePart, 4},
		{"Облицовка кромкой", "EDGE", ScopePart, 3},
		{"Присадка", "DRILL", ScopePart, 2},
		{"Сборка", "ASM", ScopeItem, 45},
		{"Упаковка", "PACK", ScopeItem, 15},
	}},
	{DemoRouteUpholstered, KindUpholstered, []demoOp{
		{"Раскрой ткани и поролона", "SEW", ScopePart, 12},
		{"Пошив чехлов", "SEW", ScopeItem, 90},
		{"Обивка и сборка", "UPH", ScopeItem, 150},
		{"Упаковка", "PACK", ScopeItem, 20},
	}},
}

// Demo decors and their boards: ЛДСП 16 мм in three decors, ХДФ 3 мм for
// back panels, plywood and foam for the sofa.
const (
	demoWhite  = "LDSP16-WHITE"
	demoSonoma = "LDSP16-SONOMA"
	demoShimo  = "LDSP16-SHIMO"
	demoHDF    = "HDF3-WHITE"
	demoPly    = "PLY18"
	demoFoam   = "PPU40-VELOUR"
)

// demoFormat is the sheet format the demo boards are bought in.
var demoFormat = SheetFormat{LengthMM: 2800, WidthMM: 2070}

func demoBands(decor, suffix string) []MaterialInput {
	return []MaterialInput{
		{Kind: KindBand, Code: "PVC04-" + suffix, Name: "Кромка ПВХ 0,4×19 " + decor, Decor: decor, ThicknessMM: 0.4, WidthMM: 19, ReorderPoint: 500},
		{Kind: KindBand, Code: "PVC2-" + suffix, Name: "Кромка ПВХ 2×19 " + decor, Decor: decor, ThicknessMM: 2, WidthMM: 19, ReorderPoint: 200},
	}
}

func demoBoard(code, name, decor string, thickness float64, grain bool, f SheetFormat, trim int, bands ...string) MaterialInput {
	return MaterialInput{Kind: KindBoard, Code: code, Name: name, Decor: decor, ThicknessMM: thickness, Grain: grain,
		Formats: []SheetFormat{f}, Trim: Trim{L1: trim, L2: trim, W1: trim, W2: trim}, Bands: bands, ReorderPoint: 10}
}

func demoFitting(code, name string, reorder float64) MaterialInput {
	return MaterialInput{Kind: KindFitting, Code: code, Name: name, ReorderPoint: reorder}
}

// demoMaterials: the bands first, so that the boards can name them.
var demoMaterials = slicesConcat(
	demoBands("Белый", "WHITE"), demoBands("Дуб сонома", "SONOMA"), demoBands("Ясень шимо", "SHIMO"),
	[]MaterialInput{
		demoBoard(demoWhite, "ЛДСП 16 мм Белый", "Белый", 16, false, demoFormat, 10, "PVC04-WHITE", "PVC2-WHITE"),
		demoBoard(demoSonoma, "ЛДСП 16 мм Дуб сонома", "Дуб сонома", 16, true, demoFormat, 10, "PVC04-SONOMA", "PVC2-SONOMA"),
		demoBoard(demoShimo, "ЛДСП 16 мм Ясень шимо", "Ясень шимо", 16, true, demoFormat, 10, "PVC04-SHIMO", "PVC2-SHIMO"),
		demoBoard(demoHDF, "ХДФ 3 мм Белый", "Белый", 3, false, demoFormat, 5),
		demoBoard(demoPly, "Фанера 18 мм", "", 18, false, SheetFormat{LengthMM: 2440, WidthMM: 1220}, 5),
		demoBoard(demoFoam, "ППУ 40 кг/м³, велюр", "", 120, false, SheetFormat{LengthMM: 2000, WidthMM: 1000}, 0),
		demoFitting("HINGE-110", "Петля накладная 110°", 100),
		demoFitting("SLIDE-450", "Направляющие шариковые 450 мм (пара)", 20),
		demoFitting("HANDLE-128", "Ручка-скоба 128 мм", 50),
		demoFitting("CONFIRMAT", "Конфирмат 7×50", 1000),
		demoFitting("SHELF-PIN", "Полкодержатель", 500),
		demoFitting("ROD-HOLDER", "Штангодержатель", 50),
		demoFitting("KUPE-ROLLERS", "Комплект роликов шкафа-купе", 10),
		demoFitting("SOFA-LEG", "Опора дивана", 40),
	},
)

func slicesConcat(ls ...[]MaterialInput) []MaterialInput {
	var out []MaterialInput
	for _, l := range ls {
		out = append(out, l...)
	}
	return out
}

// Demo decor slots.
const (
	slotBody  = "корпус"
	slotFront = "фасад"
	slotBack  = "задняя стенка"
)

var (
	demoDecors   = []string{demoWhite, demoSonoma, demoShimo}
	demoBodySlot = SlotInput{Name: slotBody, Boards: demoDecors, Default: demoWhite}
	demoFront    = SlotInput{Name: slotFront, Boards: demoDecors, Default: demoSonoma}
	demoBackSlot = SlotInput{Name: slotBack, Boards: []string{demoHDF}, Default: demoHDF}
)

// Demo edgings, as text and per side.
var (
	edge2One   = Edges{L1: "match:2"}
	edge04One  = Edges{L1: "match:0.4"}
	edge2All   = Edges{L1: "match:2", L2: "match:2", W1: "match:2", W2: "match:2"}
	edge04All  = Edges{L1: "match:0.4", L2: "match:0.4", W1: "match:0.4", W2: "match:0.4"}
	demoEdging = map[Edges]string{edge2One: "ПВХ 2 мм, 1 сторона", edge04One: "ПВХ 0,4 мм, 1 сторона",
		edge2All: "ПВХ 2 мм, по периметру", edge04All: "ПВХ 0,4 мм, по периметру"}
)

func ldsp(slot, name string, l, w int, edges Edges, qty int) PartInput {
	return PartInput{Name: name, Slot: slot, LengthMM: l, WidthMM: w, ThicknessMM: 16, Edges: edges, Edging: demoEdging[edges], Qty: qty}
}

func hdf(name string, l, w, qty int) PartInput {
	return PartInput{Name: name, Slot: slotBack, LengthMM: l, WidthMM: w, ThicknessMM: 3, Grain: GrainNone, Qty: qty}
}

// demoProducts: launching one unit of the first, two of the second, one of
// the third and one sofa gives the figures of the journal screen: 13 parts
// and 41 operations, 12 and 40, 18 and 56, 5 and 8.
var demoProducts = []struct {
	sku, name, kind, route string
	slots                  []SlotInput
	parts                  []PartInput
	fittings               []FittingInput
}{
	{"SHK-KUPE-1600", "Шкаф-купе двухдверный 1600", KindCase, DemoRouteCase, []SlotInput{demoBodySlot, demoFront}, []PartInput{
		ldsp(slotBody, "Боковина", 2200, 600, edge2One, 2),
		ldsp(slotBody, "Крыша", 1568, 600, edge2One, 1),
		ldsp(slotBody, "Дно", 1568, 600, edge2One, 1),
		ldsp(slotBody, "Полка", 780, 560, edge04One, 4),
		ldsp(slotBody, "Стойка средняя", 2100, 560, edge04One, 1),
		ldsp(slotBody, "Цоколь", 1568, 100, edge04One, 2),
		ldsp(slotFront, "Дверь-купе (заполнение)", 2150, 790, edge04All, 2),
	}, []FittingInput{{"CONFIRMAT", 24}, {"SHELF-PIN", 16}, {"KUPE-ROLLERS", 1}}},
	{"TMB-PRIK-450", "Тумба прикроватная 450", KindCase, DemoRouteCase, []SlotInput{demoBodySlot, demoFront, demoBackSlot}, []PartInput{
		ldsp(slotBody, "Боковина", 500, 400, edge2One, 2),
		ldsp(slotBody, "Крышка", 450, 400, edge2All, 1),
		ldsp(slotBody, "Дно", 418, 400, edge04One, 1),
		ldsp(slotFront, "Фасад ящика", 446, 220, edge2All, 1),
		hdf("Задняя стенка", 480, 440, 1),
	}, []FittingInput{{"SLIDE-450", 1}, {"HANDLE-128", 1}, {"CONFIRMAT", 8}}},
	{"SHK-RASP-1200", "Шкаф распашной трёхстворчатый 1200", KindCase, DemoRouteCase, []SlotInput{demoBodySlot, demoFront, demoBackSlot}, []PartInput{
		ldsp(slotBody, "Боковина", 2100, 560, edge2One, 2),
		ldsp(slotBody, "Крыша", 1168, 560, edge2One, 1),
		ldsp(slotBody, "Дно", 1168, 560, edge2One, 1),
		ldsp(slotBody, "Перегородка", 2000, 540, edge04One, 1),
		ldsp(slotBody, "Полка", 570, 530, edge04One, 5),
		ldsp(slotFront, "Фасад", 2000, 396, edge2All, 3),
		ldsp(slotBody, "Цоколь", 1168, 80, edge04One, 2),
		hdf("Задняя стенка", 2090, 1190, 1),
		ldsp(slotBody, "Штанга (опора)", 540, 100, edge04One, 2),
	}, []FittingInput{{"HINGE-110", 6}, {"HANDLE-128", 3}, {"SHELF-PIN", 20}, {"CONFIRMAT", 20}, {"ROD-HOLDER", 2}}},
	{"DIV-CHESTER-3", "Диван «Честер» трёхместный", KindUpholstered, DemoRouteUpholstered, nil, []PartInput{
		{Name: "Каркас сиденья", Board: demoPly, LengthMM: 2000, WidthMM: 900, ThicknessMM: 18, Qty: 1},
		{Name: "Спинка", Board: demoPly, LengthMM: 2000, WidthMM: 700, ThicknessMM: 18, Qty: 1},
		{Name: "Подлокотник", Board: demoPly, LengthMM: 900, WidthMM: 650, ThicknessMM: 18, Qty: 2},
		{Name: "Подушка сиденья", Board: demoFoam, LengthMM: 1900, WidthMM: 800, ThicknessMM: 120, Qty: 1},
	}, []FittingInput{{"SOFA-LEG", 6}}},
}

// SeedDemo fills an empty catalog with the demo work centres, routes and
// products, each with its creation event. It does nothing when the catalog
// has routes already and reports whether it seeded.
func (s *Service) SeedDemo(ctx context.Context) (bool, error) {
	seeded := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&Route{}).Count(&n).Error; err != nil || n > 0 {
			return err
		}
		seeded = true
		centers := map[string]int64{}
		for _, wc := range demoWorkCenters {
			wc.Calendar = Calendar{Weekdays: fiveDays, Holidays: demoHolidays}
			if wc.ShiftStart == "" {
				wc.ShiftStart = DefaultShiftStart
			}
			if err := tx.Create(&wc).Error; err != nil {
				return err
			}
			centers[wc.Code] = wc.ID
			if err := events.Add(ctx, tx, contracts.WorkCenterCreated.New(wc.ID, workCenterPayload(wc))); err != nil {
				return err
			}
		}
		routes := map[string]int64{}
		for _, dr := range demoRoutes {
			r := Route{Name: dr.name, Kind: dr.kind}
			for i, op := range dr.ops {
				r.Operations = append(r.Operations, Operation{Seq: i + 1, Name: op.name, WorkCenterID: centers[op.center], Scope: op.scope, Minutes: op.minutes})
			}
			if err := tx.Create(&r).Error; err != nil {
				return err
			}
			routes[r.Name] = r.ID
			if err := events.Add(ctx, tx, contracts.RouteCreated.New(r.ID, routePayload(r))); err != nil {
				return err
			}
		}
		for _, in := range demoMaterials {
			if err := in.validate(ctx, tx, ""); err != nil {
				return fmt.Errorf("catalog: demo material %s: %w", in.Code, err)
			}
			m := in.material()
			if err := tx.Omit("ID").Create(&m).Error; err != nil {
				return err
			}
			if err := events.Add(ctx, tx, contracts.MaterialCreated.New(m.ID, materialPayload(m))); err != nil {
				return err
			}
		}
		for _, dp := range demoProducts {
			in := ProductInput{SKU: dp.sku, Name: dp.name, Kind: dp.kind, RouteID: routes[dp.route],
				Slots: cloneSlots(dp.slots), Parts: slices.Clone(dp.parts), Fittings: slices.Clone(dp.fittings)}
			if err := in.validate(ctx, tx); err != nil {
				return fmt.Errorf("catalog: demo product %s: %w", dp.sku, err)
			}
			p := Product{SKU: in.SKU, Name: in.Name, Kind: in.Kind, RouteID: in.RouteID}
			if err := tx.Omit("ID", "Parts", "Slots", "Fittings").Create(&p).Error; err != nil {
				return err
			}
			if err := in.saveSpec(tx, &p); err != nil {
				return err
			}
			if err := events.Add(ctx, tx, contracts.ProductCreated.New(p.ID, productPayload(p))); err != nil {
				return err
			}
		}
		return nil
	})
	return seeded, err
}

func cloneSlots(ss []SlotInput) []SlotInput {
	out := make([]SlotInput, len(ss))
	for i, s := range ss {
		out[i] = SlotInput{Name: s.Name, Boards: slices.Clone(s.Boards), Default: s.Default}
	}
	return out
}
