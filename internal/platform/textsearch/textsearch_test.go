package textsearch_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/textsearch"
)

func TestFold(t *testing.T) {
	require.Equal(t, "иван петров", textsearch.Fold("  ИВАН \u00a0 Петров "))
	require.Equal(t, "федор", textsearch.Fold("Фёдор"))
	require.Equal(t, "федор", textsearch.Fold("ФЁДОР"))
}

func TestPattern_FindsInKey(t *testing.T) {
	key := textsearch.Key("Фёдор  Иванов", "+7 (900) 000-00-00")
	like := func(pattern string) bool { // LIKE with only leading and trailing %
		require.True(t, strings.HasPrefix(pattern, "%") && strings.HasSuffix(pattern, "%"), pattern)
		return strings.Contains(key, strings.ReplaceAll(pattern[1:len(pattern)-1], `\`, ""))
	}
	for _, q := range []string{"федор", "ФЁДОР", "Федор иванов", "иванов", "9000000000", "900 000-00-00", "(900)", "+7 900"} {
		require.True(t, like(textsearch.Pattern(q)), q)
	}
	for _, q := range []string{"петров", "9001", "федор  x"} {
		require.False(t, like(textsearch.Pattern(q)), q)
	}
	require.Equal(t, "", textsearch.Pattern("  "))
	require.Equal(t, `%50\% \_a\\b%`, textsearch.Pattern(`50% _a\b`))
}
