// Package suggest finds what a user probably meant by a mistyped name (a
// flag, a licence id): the one home of the distance every "did you mean"
// of the tool is measured by.
package suggest

import (
	"slices"
	"strings"
)

// Distance is the Levenshtein distance between a and b, in bytes (the
// names it compares are ASCII).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Near returns the names a mistyped one may have meant: those within two
// edits of typed, or, once typed has three letters, starting with it;
// sorted, each once.
func Near(typed string, names []string) []string {
	var near []string
	for _, n := range names {
		if Distance(typed, n) <= 2 || (len(typed) >= 3 && strings.HasPrefix(n, typed)) {
			near = append(near, n)
		}
	}
	slices.Sort(near)
	return slices.Compact(near)
}
