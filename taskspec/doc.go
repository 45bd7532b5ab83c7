// Package taskspec validates, normalises, canonicalises and hashes CERES
// task specifications, version 1 (docs/task-specification.md in the repository; CERES's own validator is
// authoritative).
//
// # Rules enforced by Parse
//
// The document is one JSON object (RFC 8259 as ECMAScript's JSON.parse
// reads it). Its top-level fields are exactly:
//
//	schema          required string, "ceres-task-specification"
//	version         required integer 1 (1.0 and 1e0 are the integer 1)
//	runTitle        required string, non-empty after trimming
//	runDescription  optional string; dropped when blank after trimming
//	cycleCount      required positive safe integer
//	tasks           required non-empty array of task objects, order kept
//
// Each task has exactly these fields:
//
//	id            required string, non-empty after trimming, unique after trimming
//	type          required, "timed", "open" or "pause"
//	label         required string, non-empty after trimming
//	instructions  required string, non-empty after trimming
//	durationS     number, finite, 0 ≤ x ≤ Number.MAX_SAFE_INTEGER; −0 is 0
//	repeatCount   positive safe integer
//	resetTimeS    number, finite, 0 ≤ x ≤ Number.MAX_SAFE_INTEGER; −0 is 0
//
// A timed task requires durationS, repeatCount and resetTimeS; an open task
// requires repeatCount and resetTimeS and must not have durationS; a pause
// requires durationS and must not have repeatCount or resetTimeS.
// Unknown fields, wrong JSON types (null included) and empty required
// strings are violations.
//
// A safe integer is a number whose value is an integer of magnitude at most
// 2^53 − 1 (Number.isSafeInteger); 2.0 and 1E0 qualify. Numbers are judged
// on the exact decimal value written, never on its nearest double:
// 9007199254740993 is unsafe although it rounds to a double, and a literal
// such as 1.0000000000000000001 is not an integer although JSON.parse would
// round it to 1. Only such literals, which no JSON serialiser writes, are
// judged more strictly than CERES would; every rounded double a conforming
// document yields is the one JSON.parse yields.
//
// Strings are trimmed with String.prototype.trim's whitespace set (TAB,
// LF, VT, FF, CR, space, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
// U+202F, U+205F, U+3000, U+FEFF; not U+0085 or U+180E) before every check,
// type and schema included.
//
// # Choices where the contract is silent
//
//   - Duplicate object keys are violations. JSON.parse silently keeps the
//     last value, so a duplicated key means the author's document and
//     CERES's reading of it may disagree; a hash must never hide that.
//     The remaining checks see the last value, as CERES would.
//   - Strings must be valid UTF-8, and an escaped UTF-16 surrogate must be
//     paired: a lone surrogate has no UTF-8 encoding, so the canonical bytes
//     (and the hash over them) would be undefined.
//   - A leading UTF-8 byte order mark is ignored, as UTF-8 text decoding
//     does before JSON.parse sees the text.
//   - Nesting deeper than 64 levels is a syntax violation; it can only
//     occur in a value the contract already rejects.
//
// Every violation is reported, each with a JavaScript-style path
// (`tasks[1].durationS: an open task must not have durationS`). A JSON
// syntax error stops parsing and is reported once, with its byte offset.
//
// # Warnings
//
// Spec.Warnings reports what is valid but will not be captured as written:
// a resetTimeS below 5, since CERES enforces a five-second minimum reset when
// it applies a specification to a capture configuration.
//
// # Canonical form and hash
//
// Spec.Canonical is RFC 8785 (JCS) of the normalised object: members sorted
// by UTF-16 code units, no insignificant whitespace, strings as
// JSON.stringify writes them, numbers in ECMAScript's shortest form (12.5,
// 5e-7, 100, 0 for −0). Spec.Hash is the lowercase hexadecimal SHA-256 of
// those bytes. Parse(s.Canonical()) yields s again: the canonical form is a
// fixed point.
package taskspec
