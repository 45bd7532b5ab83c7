package taskspec

import (
	"strconv"
	"strings"
)

// MaxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, 2^53 − 1: the
// bound of every number in a specification.
const MaxSafeInteger = 1<<53 - 1

// maxSafeDigits and maxSafeExp are MaxSafeInteger as a decimal: 0.9007199254740991 × 10^16.
const (
	maxSafeDigits = "9007199254740991"
	maxSafeExp    = 16
)

// decimal is the exact value of a JSON number literal, 0.digits × 10^exp,
// so that integer and range checks see what was written and not its nearest
// double (9007199254740993 would round to 2^53 and 1.0000000000000000001 to 1).
type decimal struct {
	neg    bool
	digits string // significant digits without leading or trailing zeros; "" for zero
	exp    int64
}

// expLimit saturates exponents: any value past it is far outside every
// range the contract checks, and saturating keeps the arithmetic from
// overflowing on literals such as 1e99999999999999999999.
const expLimit = 1 << 40

// parseDecimal reads a literal that jsonReader.number accepted.
func parseDecimal(lit string) decimal {
	var d decimal
	if strings.HasPrefix(lit, "-") {
		d.neg = true
		lit = lit[1:]
	}
	mantissa, expPart, _ := strings.Cut(strings.ToLower(lit), "e")
	intPart, fracPart, _ := strings.Cut(mantissa, ".")
	all := intPart + fracPart
	point := int64(len(intPart))
	trimmed := strings.TrimLeft(all, "0")
	point -= int64(len(all) - len(trimmed))
	d.digits = strings.TrimRight(trimmed, "0")
	if d.digits == "" {
		return d
	}
	var e int64
	if expPart != "" {
		eneg := false
		switch expPart[0] {
		case '-':
			eneg = true
			expPart = expPart[1:]
		case '+':
			expPart = expPart[1:]
		}
		for i := 0; i < len(expPart) && e < expLimit; i++ {
			e = e*10 + int64(expPart[i]-'0')
		}
		e = min(e, expLimit)
		if eneg {
			e = -e
		}
	}
	d.exp = point + e
	return d
}

func (d decimal) isZero() bool { return d.digits == "" }

// isInteger reports whether the value has no fractional part.
func (d decimal) isInteger() bool { return d.isZero() || int64(len(d.digits)) <= d.exp }

// absAtMostMaxSafe reports whether |d| ≤ 2^53 − 1.
func (d decimal) absAtMostMaxSafe() bool {
	switch {
	case d.isZero():
		return true
	case d.exp != maxSafeExp:
		return d.exp < maxSafeExp
	}
	// Equal exponents: digit strings without trailing zeros compare as the
	// values do.
	return strings.Compare(d.digits, maxSafeDigits) <= 0
}

// isPositiveSafeInteger is Number.isSafeInteger(v) && v > 0 on the exact value.
func (d decimal) isPositiveSafeInteger() bool {
	return !d.neg && !d.isZero() && d.isInteger() && d.absAtMostMaxSafe()
}

// isNonNegativeBounded is "finite, non-negative, no greater than
// Number.MAX_SAFE_INTEGER" on the exact value; −0 is a non-negative zero.
func (d decimal) isNonNegativeBounded() bool {
	return d.isZero() || (!d.neg && d.absAtMostMaxSafe())
}

// float64Of returns the nearest double to a literal whose value is within
// ±MaxSafeInteger (ECMAScript's rounding, as strconv.ParseFloat's), with −0
// turned into 0 as JSON serialisation does.
func float64Of(lit string) float64 {
	// The literal is syntactically valid and within range, so the only
	// possible error is an underflow, for which ParseFloat returns the
	// correctly rounded value (zero) as well.
	f, _ := strconv.ParseFloat(lit, 64)
	if f == 0 {
		return 0
	}
	return f
}
