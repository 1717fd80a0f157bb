#!/usr/bin/env bash
# Renders the schedule's Gantt chart of a demo plan to PNG, to look at.
#
#   scripts/gantt-png.sh [OUT.png]      (default: gantt.png; the SVG beside it)
#
# GANTT_DAYS sets how many days the chart shows (default 20, from two days
# back; at most 92); GANTT_PORT the port the service listens on (18089).
#
# It builds the service, starts it on a fresh SQLite database in a temporary
# directory (the demo catalog), places and launches a few orders of every
# size with due dates around today, reports some progress (one order in
# work, one done), cuts the edge-banding centre's capacity so that some days
# are overloaded, fetches GET /api/v1/plan/schedule as image/svg+xml and
# converts it with rsvg-convert (Debian: apt-get install librsvg2-bin).
set -euo pipefail

out=$(realpath -m "${1:-gantt.png}")
svg=${out%.png}.svg
command -v rsvg-convert >/dev/null || { echo "rsvg-convert is missing: apt-get install librsvg2-bin" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq is missing" >&2; exit 1; }

dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT

cd "$(dirname "$0")/.."
go build -o "$dir/tsekh" ./cmd/tsekh
port=${GANTT_PORT:-18089}
base=http://127.0.0.1:$port
SQLITE_PATH=$dir/tsekh.db HTTP_ADDR=127.0.0.1:$port DISPATCH_INTERVAL=1s LOG_LEVEL=warn \
	"$dir/tsekh" serve >"$dir/out.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	curl -sf "$base/healthz" >/dev/null 2>&1 && break
	sleep 0.2
done
curl -sf "$base/healthz" >/dev/null || { cat "$dir/out.log" >&2; exit 1; }
token=$(grep -m1 -o 'tsk_[A-Za-z0-9_-]*' "$dir/out.log")
[ -n "$token" ] || { cat "$dir/out.log" >&2; exit 1; }

api() { # METHOD PATH [BODY]
	curl -sf -X "$1" "$base$2" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' ${3:+-d "$3"}
}
day() { date -u -d "$1 days" +%F; }

# Orders: SKU, quantity, due in days from today, customer.
orders=(
	"SHK-RASP-1200 30 9 ООО «Мебель & Дом»"
	"TMB-PRIK-450 1 3 Иванова А. П."
	"SHK-KUPE-1600 6 6 Петров С. В."
	"DIV-CHESTER-3 3 2 Сидоров К. Н."
	"TMB-PRIK-450 2 12 Кузнецова Е. И."
	"SHK-KUPE-1600 1 4 Смирнов Д. А."
	"DIV-CHESTER-3 1 8 Орлова М. С."
	"SHK-RASP-1200 10 14 ИП Волков"
	"TMB-PRIK-450 1 5 Зайцев Р. О."
)
ids=()
for o in "${orders[@]}"; do
	read -r sku qty due customer <<<"$o"
	body=$(jq -nc --arg sku "$sku" --argjson qty "$qty" --arg due "$(day "$due")" --arg name "$customer" \
		'{customer: {name: $name}, items: [{sku: $sku, qty: $qty}], due_date: $due}')
	ids+=("$(api POST /api/v1/orders "$body" | jq -r .id)")
done

# Wait for the plan's backlog to hear of every order.
for _ in $(seq 100); do
	n=$(api GET '/api/v1/plan/backlog?limit=500' | jq '.items | length')
	[ "$n" -ge "${#ids[@]}" ] && break
	sleep 0.2
done

pos=()
for id in "${ids[@]}"; do
	items=$(api GET '/api/v1/plan/backlog?limit=500' | jq -c --argjson o "$id" '[.items[] | select(.order_id == $o) | .item_id]')
	pos+=("$(api POST /api/v1/production-orders "{\"items\": $items}" | jq -r .id)")
done

# The second order (one nightstand) is made; the first one is cut in part.
po=${pos[1]}
parts=$(api GET "/api/v1/production-orders/$po" | jq .parts_count)
for seq in 1 2 3; do api POST "/api/v1/production-orders/$po/progress" "{\"seq\": $seq, \"qty\": $parts}" >/dev/null; done
for seq in 4 5; do api POST "/api/v1/production-orders/$po/progress" "{\"seq\": $seq, \"qty\": 1}" >/dev/null; done
api POST "/api/v1/production-orders/${pos[0]}/progress" '{"seq": 1, "qty": 40}' >/dev/null

# Edge banding loses most of its capacity: what was planned there overloads it.
edge=$(api GET '/api/v1/work-centers?limit=500' | jq -c '.items[] | select(.code == "EDGE")')
api PUT "/api/v1/work-centers/$(jq .id <<<"$edge")" \
	"$(jq -c '{code, name, capacity_min_per_day: 300, calendar}' <<<"$edge")" >/dev/null

curl -sf "$base/api/v1/plan/schedule?from=$(day -2)&to=$(day $((${GANTT_DAYS:-20} - 3)))" \
	-H "Authorization: Bearer $token" -H 'Accept: image/svg+xml' -o "$svg"
rsvg-convert --background-color=white -o "$out" "$svg"
echo "$out ($svg)"
