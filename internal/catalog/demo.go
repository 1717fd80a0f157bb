package catalog

import (
	"context"

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

func ldsp(name string, l, w int, edging string, qty int) Part {
	return Part{Name: name, Material: "ЛДСП 16 мм", LengthMM: l, WidthMM: w, ThicknessMM: 16, Edging: edging, Qty: qty}
}

func hdf(name string, l, w, qty int) Part {
	return Part{Name: name, Material: "ХДФ 3 мм", LengthMM: l, WidthMM: w, ThicknessMM: 3, Qty: qty}
}

// demoProducts: launching one unit of the first, two of the second, one of
// the third and one sofa gives the figures of the journal screen: 13 parts
// and 41 operations, 12 and 40, 18 and 56, 5 and 8.
var demoProducts = []struct {
	sku, name, kind, route string
	parts                  []Part
}{
	{"SHK-KUPE-1600", "Шкаф-купе двухдверный 1600", KindCase, DemoRouteCase, []Part{
		ldsp("Боковина", 2200, 600, "ПВХ 2 мм, 1 сторона", 2),
		ldsp("Крыша", 1568, 600, "ПВХ 2 мм, 1 сторона", 1),
		ldsp("Дно", 1568, 600, "ПВХ 2 мм, 1 сторона", 1),
		ldsp("Полка", 780, 560, "ПВХ 0,4 мм, 1 сторона", 4),
		ldsp("Стойка средняя", 2100, 560, "ПВХ 0,4 мм, 1 сторона", 1),
		ldsp("Цоколь", 1568, 100, "ПВХ 0,4 мм, 1 сторона", 2),
		ldsp("Дверь-купе (заполнение)", 2150, 790, "ПВХ 0,4 мм, по периметру", 2),
	}},
	{"TMB-PRIK-450", "Тумба прикроватная 450", KindCase, DemoRouteCase, []Part{
		ldsp("Боковина", 500, 400, "ПВХ 2 мм, 1 сторона", 2),
		ldsp("Крышка", 450, 400, "ПВХ 2 мм, по периметру", 1),
		ldsp("Дно", 418, 400, "ПВХ 0,4 мм, 1 сторона", 1),
		ldsp("Фасад ящика", 446, 220, "ПВХ 2 мм, по периметру", 1),
		hdf("Задняя стенка", 480, 440, 1),
	}},
	{"SHK-RASP-1200", "Шкаф распашной трёхстворчатый 1200", KindCase, DemoRouteCase, []Part{
		ldsp("Боковина", 2100, 560, "ПВХ 2 мм, 1 сторона", 2),
		ldsp("Крыша", 1168, 560, "ПВХ 2 мм, 1 сторона", 1),
		ldsp("Дно", 1168, 560, "ПВХ 2 мм, 1 сторона", 1),
		ldsp("Перегородка", 2000, 540, "ПВХ 0,4 мм, 1 сторона", 1),
		ldsp("Полка", 570, 530, "ПВХ 0,4 мм, 1 сторона", 5),
		ldsp("Фасад", 2000, 396, "ПВХ 2 мм, по периметру", 3),
		ldsp("Цоколь", 1168, 80, "ПВХ 0,4 мм, 1 сторона", 2),
		hdf("Задняя стенка", 2090, 1190, 1),
		ldsp("Штанга (опора)", 540, 100, "ПВХ 0,4 мм, 1 сторона", 2),
	}},
	{"DIV-CHESTER-3", "Диван «Честер» трёхместный", KindUpholstered, DemoRouteUpholstered, []Part{
		{Name: "Каркас сиденья", Material: "Фанера 18 мм", LengthMM: 2000, WidthMM: 900, ThicknessMM: 18, Qty: 1},
		{Name: "Спинка", Material: "Фанера 18 мм", LengthMM: 2000, WidthMM: 700, ThicknessMM: 18, Qty: 1},
		{Name: "Подлокотник", Material: "Фанера 18 мм", LengthMM: 900, WidthMM: 650, ThicknessMM: 18, Qty: 2},
		{Name: "Подушка сиденья", Material: "ППУ 40 кг/м³, велюр", LengthMM: 1900, WidthMM: 800, ThicknessMM: 120, Qty: 1},
	}},
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
		for _, dp := range demoProducts {
			p := Product{SKU: dp.sku, Name: dp.name, Kind: dp.kind, RouteID: routes[dp.route]}
			for i, part := range dp.parts {
				part.Seq = i + 1
				p.Parts = append(p.Parts, part)
			}
			if err := tx.Create(&p).Error; err != nil {
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
