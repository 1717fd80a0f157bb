package input_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
)

type item struct {
	SKU  string `json:"sku"`
	Qty  int    `json:"qty"`
	Note string `json:"note"`
}

type order struct {
	ID       *int64 `json:"id"`
	Customer struct {
		Name string `json:"name"`
	} `json:"customer"`
	Items    []item `json:"items"`
	Weekdays []int  `json:"weekdays"`
	Matrix   [][]int
}

func fieldsOf(err error) []string {
	var out []string
	if e := apperr.As(err); e != nil {
		for _, f := range e.Fields {
			out = append(out, f.Field)
		}
	}
	return out
}

func TestDecodeObject(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       string
		fields     []string
		detail     string
	}{
		{"OK", `{"id": 1, "customer": {"name": "Иван\tПетров"}, "items": [{"sku": "A", "qty": 1, "note": "две\nстроки"}]}`, "", nil, ""},
		{"OKEmptyKeyIgnored", `{"": 1, "items": []}`, "", nil, ""},
		{"ErrEmpty", "  \n", apperr.EBADREQUEST, nil, "empty"},
		{"ErrNotJSON", `{"id": x}`, apperr.EBADREQUEST, nil, "not valid JSON"},
		{"ErrTruncatedInObject", `{"id": 1, "items": [{"sku": "A"`, apperr.EBADREQUEST, nil, "truncated"},
		{"ErrTruncatedInString", `{"id": 1, "customer": {"name": "Ив`, apperr.EBADREQUEST, nil, "truncated"},
		{"ErrTruncatedAfterColon", `{"id":`, apperr.EBADREQUEST, nil, "truncated"},
		{"ErrArray", `[{"id": 1}]`, apperr.EBADREQUEST, nil, "JSON object"},
		{"ErrString", `"x"`, apperr.EBADREQUEST, nil, "JSON object"},
		{"ErrTwoObjects", `{} {}`, apperr.EBADREQUEST, nil, "one JSON object"},
		{"ErrTrailingGarbage", `{} x`, apperr.EBADREQUEST, nil, "one JSON object"},
		{"ErrTooDeep", `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, apperr.EBADREQUEST, nil, "deeper"},
		{"ErrNUL", `{"customer": {"name": "a\u0000b"}}`, apperr.EINVALID, []string{"customer.name"}, ""},
		{"ErrNULInArray", `{"items": [{"sku": "A"}, {"sku": "\u0000"}]}`, apperr.EINVALID, []string{"items[1].sku"}, ""},
		{"ErrBell", `{"items": [{"note": "\u0007"}]}`, apperr.EINVALID, []string{"items[0].note"}, ""},
		{"ErrC1", `{"customer": {"name": "\u0085"}}`, apperr.EINVALID, []string{"customer.name"}, ""},
		{"ErrInvalidUTF8", "{\"customer\": {\"name\": \"\xff\"}}", apperr.EINVALID, []string{"customer.name"}, ""},
		{"ErrOverlongUTF8", "{\"items\": [{\"sku\": \"\xc0\xaf\"}]}", apperr.EINVALID, []string{"items[0].sku"}, ""},
		{"ErrInvalidKey", "{\"customer\": {\"na\xffme\": \"x\"}}", apperr.EINVALID, []string{"customer.na\uFFFDme"}, ""},
		{"ErrNULKey", `{"a\u0000": 1}`, apperr.EINVALID, []string{`a\x00`}, ""},
		{"ErrUnusedFieldStillChecked", `{"extra": ["\u0000"]}`, apperr.EINVALID, []string{"extra[0]"}, ""},
		{"ErrTypeKeepsIndex", `{"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": "two"}]}`, apperr.EINVALID, []string{"items[1].qty"}, ""},
		{"ErrTypeCaseFolded", `{"Items": [{"QTY": true}]}`, apperr.EINVALID, []string{"Items[0].QTY"}, ""},
		{"ErrTypeArrayElement", `{"weekdays": [1, 2, "x"]}`, apperr.EINVALID, []string{"weekdays[2]"}, ""},
		{"ErrTypeNestedArray", `{"Matrix": [[1], [2, {}]]}`, apperr.EINVALID, []string{"Matrix[1][1]"}, ""},
		{"ErrTypeObjectForArray", `{"items": {"sku": "A"}}`, apperr.EINVALID, []string{"items"}, ""},
		{"ErrTypeArrayForObject", `{"customer": [1]}`, apperr.EINVALID, []string{"customer"}, ""},
		{"ErrTypeStringForNumberPointer", `{"id": "10455"}`, apperr.EINVALID, []string{"id"}, ""},
		{"ErrTypeHugeNumber", `{"items": [{"qty": 1e400}]}`, apperr.EINVALID, []string{"items[0].qty"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o order
			err := input.DecodeTolerant([]byte(tc.body), &o)
			require.Equal(t, tc.code, apperr.Code(err), "%v", err)
			require.Equal(t, tc.fields, fieldsOf(err))
			if tc.detail != "" {
				require.Contains(t, apperr.As(err).Message, tc.detail)
			}
		})
	}
}

// DecodeObject takes only the members its type has, spelt as they are; the
// shop's webhook (DecodeTolerant) takes others and ignores them. A JSON
// string never holds a lone surrogate, which encoding/json would turn into
// U+FFFD.
func TestDecodeObject_Strict(t *testing.T) {
	type embedded struct {
		Extra string `json:"extra"`
	}
	type body struct {
		order
		embedded
		Raw   json.RawMessage   `json:"raw"`
		Attrs map[string]string `json:"attrs"`
		Skip  string            `json:"-"`
	}
	for _, tc := range []struct {
		name, body string
		fields     []string
	}{
		{"OK", `{"id": 1, "customer": {"name": "x"}, "items": [{"sku": "A", "qty": 1}], "Matrix": [[1]], "extra": "e", "raw": {"any": 1}, "attrs": {"free": "x"}}`, nil},
		{"ErrCaseVariant", `{"items": [{"sku": "A", "QTY": 1}]}`, []string{"items[0].QTY"}},
		{"ErrCaseVariantTop", `{"Items": []}`, []string{"Items"}},
		{"ErrUnknown", `{"customer": {"name": "x", "nickname": "y"}, "colour": "red"}`, []string{"customer.nickname", "colour"}},
		{"ErrUnknownDeep", `{"items": [{"sku": "A"}, {"sku": "B", "price": {"amount": 1}}]}`, []string{"items[1].price"}},
		{"ErrIgnoredField", `{"Skip": "x", "-": 1}`, []string{"Skip", "-"}},
		{"ErrEmptyKey", `{"": 1}`, []string{""}},
		{"ErrLoneHigh", `{"customer": {"name": "a\ud800b"}}`, []string{"customer.name"}},
		{"ErrLoneLow", `{"items": [{"sku": "\udfff"}]}`, []string{"items[0].sku"}},
		{"ErrHighThenHigh", `{"customer": {"name": "\ud800\ud800\udc00"}}`, []string{"customer.name"}},
		{"ErrLoneAtEnd", `{"customer": {"name": "x\ud83d"}}`, []string{"customer.name"}},
		{"ErrLoneKey", `{"a\udc00": 1}`, []string{"a\uFFFD"}},
		{"OKPair", `{"customer": {"name": "\ud83d\ude00 \\ud800 \u00e9"}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b body
			err := input.DecodeObject([]byte(tc.body), &b)
			require.Equal(t, tc.fields, fieldsOf(err), "%v", err)
		})
	}
	var o order
	require.NoError(t, input.DecodeTolerant([]byte(`{"id": 1, "colour": "red", "customer": {"nickname": "y"}}`), &o))
	require.Equal(t, []string{"id"}, fieldsOf(input.DecodeTolerant([]byte(`{"id": "\ud800"}`), &o)))
	err := input.DecodeObject([]byte(`{"items": [{"QTY": 1}]}`), &o)
	require.Contains(t, apperr.As(err).Fields[0].Message, "did you mean qty?")
}

// A member sent twice is refused, naming it, rather than the last one
// winning; in an object read into a struct also twice regardless of case
// (encoding/json fills one field from both), in a map only as spelt.
func TestDecodeObject_RepeatedMembers(t *testing.T) {
	type body struct {
		order
		Attrs map[string]string `json:"attrs"`
	}
	for _, tc := range []struct {
		name, body string
		fields     []string
	}{
		{"ErrTop", `{"id": 1, "id": 2}`, []string{"id"}},
		{"ErrItem", `{"items": [{"qty": -5, "qty": 1}]}`, []string{"items[0].qty"}},
		{"ErrEscaped", `{"items": [{"qty": 1, "q\u0074y": 2}]}`, []string{"items[0].qty"}},
		{"ErrObjects", `{"customer": {"name": "a"}, "customer": {"name": "b"}}`, []string{"customer"}},
		{"ErrMapKey", `{"attrs": {"a": "1", "a": "2"}}`, []string{"attrs.a"}},
		{"OKMapKeysOfCase", `{"attrs": {"a": "1", "A": "2"}}`, nil},
		{"OKSameNameInOtherObjects", `{"items": [{"qty": 1}, {"qty": 2}], "customer": {"name": "x"}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b body
			err := input.DecodeObject([]byte(tc.body), &b)
			require.Equal(t, tc.fields, fieldsOf(err), "%v", err)
		})
	}
	var o order
	err := input.DecodeObject([]byte(`{"id": 1, "id": 2, "colour": "x", "items": [{"qty": 2147483648}]}`), &o)
	require.Equal(t, "some members are unknown, and some members are repeated, and some whole numbers are out of range", apperr.As(err).Message,
		"the detail names what was found")
	err = input.DecodeTolerant([]byte(`{"items": [{"qty": 1, "QTY": 2}]}`), &o)
	require.Equal(t, []string{"items[0].QTY"}, fieldsOf(err), "a partner's case-variant repeat fills the same field: %v", err)
	require.Contains(t, apperr.As(err).Fields[0].Message, `repeats qty`)
	err = input.DecodeTolerant([]byte(`{"items": [{"qty": 1, "ſku": "a", "SKU": "b"}]}`), &o)
	require.Equal(t, []string{"items[0].SKU"}, fieldsOf(err), "ſ is s regardless of case: %v", err)
	require.NoError(t, input.DecodeTolerant([]byte(`{"colour": 1, "COLOUR": 2}`), &o), "names of no field repeat only as spelt")
}

// A whole number read into an int is within the 32-bit integer column that
// stores it (PostgreSQL refuses to encode more into int4; SQLite stores
// it), in members, array elements and pointers alike; int64 members (ids)
// take what int64 does.
func TestDecodeObject_IntBounds(t *testing.T) {
	type body struct {
		order
		Step  *int  `json:"step"`
		Prod  int64 `json:"prod"`
		Small int16 `json:"small"`
	}
	for _, tc := range []struct {
		name, body string
		fields     []string
	}{
		{"OKMax", `{"step": 2147483647, "items": [{"qty": -2147483648}], "weekdays": [2147483647]}`, nil},
		{"ErrOverMax", `{"step": 2147483648}`, []string{"step"}},
		{"ErrUnderMin", `{"items": [{"qty": -2147483649}]}`, []string{"items[0].qty"}},
		{"ErrElement", `{"weekdays": [1, 9223372036854775807]}`, []string{"weekdays[1]"}},
		{"ErrNested", `{"Matrix": [[1, 4294967296]]}`, []string{"Matrix[0][1]"}},
		{"OKInt64", `{"prod": 9223372036854775807, "id": 2147483648}`, nil},
		{"ErrBeyondInt64", `{"step": 9223372036854775808}`, []string{"step"}},
		{"ErrInt16", `{"small": 40000}`, []string{"small"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b body
			err := input.DecodeObject([]byte(tc.body), &b)
			require.Equal(t, tc.fields, fieldsOf(err), "%v", err)
		})
	}
	var o order
	err := input.DecodeTolerant([]byte(`{"Items": [{"QTY": 2147483648}]}`), &o)
	require.Equal(t, []string{"Items[0].QTY"}, fieldsOf(err), "a case variant fills the field all the same: %v", err)
	require.Contains(t, apperr.As(err).Fields[0].Message, "from -2147483648 to 2147483647")
}

func TestDecodeObject_BoundsItsAnswer(t *testing.T) {
	body := `{"items": [` + strings.Repeat(`{"sku": "\u0000"},`, 1000) + `{}]}`
	err := input.DecodeObject([]byte(body), &order{})
	require.Equal(t, apperr.EINVALID, apperr.Code(err))
	require.Len(t, apperr.As(err).Fields, 20)
}

func TestDecodeEnvelope_LeavesThePartsToTheirOwnCheck(t *testing.T) {
	var env struct {
		Orders []json.RawMessage `json:"orders"`
	}
	body := "{\"orders\": [{\"name\": \"\\u0000\"}, {\"name\": \"\xff\"}]}"
	require.NoError(t, input.DecodeEnvelope([]byte(body), &env))
	require.Len(t, env.Orders, 2)
	var row struct {
		Name string `json:"name"`
	}
	require.Equal(t, []string{"name"}, fieldsOf(input.DecodeObject(env.Orders[1], &row)), "the raw part keeps its bytes")
	require.Equal(t, apperr.EBADREQUEST, apperr.Code(input.DecodeEnvelope([]byte(`{"orders": [`), &env)))
}

func TestText(t *testing.T) {
	cyrillic := strings.Repeat("Ж", 200)
	require.Empty(t, input.Line("name", cyrillic, input.MaxName), "200 Cyrillic letters are 400 bytes but 200 characters")
	require.Equal(t, "name", input.Line("name", cyrillic+"Ж", input.MaxName)[0].Field)
	require.Empty(t, input.Line("phone", "", input.MaxPhone))
	require.Equal(t, "is required", input.RequiredLine("name", "", input.MaxName)[0].Message)
	require.NotEmpty(t, input.Line("name", "a\nb", input.MaxName), "a single line has no newline")
	require.NotEmpty(t, input.Line("name", "a\tb", input.MaxName))
	require.Empty(t, input.Note("note", "a\r\n\tb", input.MaxNote))
	require.NotEmpty(t, input.Note("note", "a\x00b", input.MaxNote))
	require.NotEmpty(t, input.Note("note", "a\x7fb", input.MaxNote))
	require.NotEmpty(t, input.Line("name", "\xff", input.MaxName))
	require.Contains(t, input.Line("name", "ok\xc0\xaf", input.MaxName)[0].Message, "UTF-8")
	require.Empty(t, input.Line("name", "\ufffd is a character like any other", input.MaxName))
}

func TestDate(t *testing.T) {
	for s, ok := range map[string]bool{
		"": true, "2000-01-01": true, "2026-12-20": true, "2100-12-31": true,
		"1999-12-31": false, "0000-01-01": false, "2101-01-01": false, "9999-12-31": false,
		"2026-02-30": false, "2026-1-5": false, "tomorrow": false,
	} {
		_, fields := input.Date("due_date", s)
		require.Equal(t, ok, len(fields) == 0, "%q: %v", s, fields)
	}
	for s, ok := range map[string]bool{
		"": true, "2026-11-13T17:20:25.729Z": true, "2000-01-01T00:00:00Z": true, "2100-12-31T23:59:59.999Z": true,
		"1999-12-31T23:59:59Z": false, "2101-01-01T00:00:00Z": false, "0000-01-01T00:00:00Z": false, "yesterday": false,
	} {
		_, fields := input.Time("since", s)
		require.Equal(t, ok, len(fields) == 0, "%q: %v", s, fields)
	}
}

// A code is read in NFKC, trimmed, and holds ASCII letters, digits and
// "-_./" only; codes are equal by one key, their normal form in lower case.
func TestCode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"LDSP16-WHITE", "LDSP16-WHITE"},
		{"  ldsp16-white\t", "ldsp16-white"},
		{"ＬＤＳＰ１６－ＷＨＩＴＥ", "LDSP16-WHITE"}, // fullwidth
		{"ſ-BOARD", "s-BOARD"},           // long s
		{"HDF_3.2/A", "HDF_3.2/A"},
	} {
		got, f := input.Code("code", tc.in, 32)
		require.Empty(t, f, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{
		"LDSP16\u200b-WHITE", "\ufeffLDSP", "LDSP\u202eETIHW", "LDSP\uffff", "LDSP16-WHІTE" /* Cyrillic І */, "LDSP🌸",
		"F 1", "A,B", "A;B", "ЛДСП", "", "   ", "a\u0000", "a\nb", strings.Repeat("A", 33),
	} {
		_, f := input.Code("code", bad, 32)
		require.Len(t, f, 1, "%q", bad)
		require.Equal(t, "code", f[0].Field)
	}
	_, f := input.Code("code", "LDSP16\u200b-WHITE", 32)
	require.Contains(t, f[0].Message, "U+200B (character 7)")
	_, f = input.Code("code", "LDSP🌸", 32)
	require.Contains(t, f[0].Message, "'🌸' (U+1F338)")

	require.Equal(t, input.CodeKey("S-BOARD"), input.CodeKey("ſ-board"), "one folding for every lookup")
	require.Equal(t, input.CodeKey("LDSP16-WHITE"), input.CodeKey(" ＬＤＳＰ16-white "))
	require.NotEqual(t, input.CodeKey("LDSP16-WHITE"), input.CodeKey("LDSP16-WHІTE"))
}
