package taskspec

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/gowebpki/jcs"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n got %s\nwant %s", name, got, want)
	}
}

// TestFormatNumber checks ECMAScript Number-to-string on values whose
// expected text comes from the ECMAScript rules and RFC 8785's examples.
func TestFormatNumber(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   float64
		want string
	}{
		{12.50, "12.5"},
		{5e-7, "5e-7"},
		{1e2, "100"},
		{2.0, "2"},
		{math.Copysign(0, -1), "0"},
		{0, "0"},
		{9007199254740991, "9007199254740991"},
		{1e21, "1e+21"},
		{999999999999999900000, "999999999999999900000"},
		{1e-7, "1e-7"},
		{1e-6, "0.000001"},
		{1.5e-7, "1.5e-7"},
		{123e-20, "1.23e-18"},
		{4.50, "4.5"},
		{2e-3, "0.002"},
		{0.000000000000000000000000001, "1e-27"},
		{1e30, "1e+30"},
		{333333333.33333329, "333333333.3333333"},
		{0.30000000000000004, "0.30000000000000004"}, // 0.1 + 0.2 in doubles
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{-1.5, "-1.5"},
	}
	for _, tc := range cases {
		if got := formatNumber(tc.in); got != tc.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\s/", `"q\"b\\s/"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x0b\x1f\x7f", `"\u0000\u0001\u000b\u001f` + "\x7f\""},
		{"é中😀\u2028\u2029", "\"é中😀\u2028\u2029\""},
	}
	for _, tc := range cases {
		if got := string(appendJSONString(nil, tc.in)); got != tc.want {
			t.Errorf("appendJSONString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestCompareUTF16 checks RFC 8785's sort order, which differs from code
// point order above U+FFFF.
func TestCompareUTF16(t *testing.T) {
	t.Parallel()
	// U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FFFD.
	if compareUTF16("\U0001F600", "\uFFFD") >= 0 {
		t.Errorf("U+1F600 does not sort before U+FFFD")
	}
	if compareUTF16("a", "b") >= 0 || compareUTF16("b", "a") <= 0 || compareUTF16("ab", "ab") != 0 || compareUTF16("a", "ab") >= 0 {
		t.Errorf("compareUTF16 disagrees with ASCII order")
	}
}

// awkwardDocuments are valid specifications whose numbers and strings
// exercise the canonical form: numbers that must be rewritten and strings
// that must (or must not) be escaped.
func awkwardDocuments() map[string]string {
	return map[string]string{
		"numbers": `{"schema":"ceres-task-specification","version":1.0,"runTitle":"Numbers","cycleCount":2.0,"tasks":[` +
			`{"id":"a","type":"timed","label":"A","instructions":"I","durationS":12.50,"repeatCount":1E0,"resetTimeS":5e-7},` +
			`{"id":"b","type":"timed","label":"B","instructions":"I","durationS":1e2,"repeatCount":9007199254740991,"resetTimeS":-0},` +
			`{"id":"c","type":"open","label":"C","instructions":"I","repeatCount":3e1,"resetTimeS":9007199254740991},` +
			`{"id":"d","type":"pause","label":"D","instructions":"I","durationS":1e-7},` +
			`{"id":"e","type":"pause","label":"E","instructions":"I","durationS":0.1},` +
			`{"id":"f","type":"pause","label":"F","instructions":"I","durationS":123456789012.125},` +
			`{"id":"g","type":"pause","label":"G","instructions":"I","durationS":0.000001},` +
			`{"id":"h","type":"pause","label":"H","instructions":"I","durationS":4.35}]}`,
		"strings": `{"schema":"ceres-task-specification","version":1,` +
			`"runTitle":"  Échantillon — transfert 试样 ","runDescription":"\u00a0Déplacer 😀 l'échantillon\n\"rack\"\t\\ \u2028",` +
			`"cycleCount":1,"tasks":[` +
			`{"id":"ü-1","type":"timed","label":"\u0001ctl\u001f\u007f","instructions":"\ud83d\ude00 emoji, \uD834\uDD1E clef","durationS":1,"repeatCount":1,"resetTimeS":5},` +
			`{"id":"\ufeffzwnbsp\u3000","type":"open","label":"ラベル","instructions":"line\u2028sep\u2029para\u0085nel","repeatCount":2,"resetTimeS":5},` +
			`{"id":"/slash/","type":"pause","label":"\u000b\f tab\tinside ","instructions":"<script>&amp;</script>","durationS":2}]}`,
		"blank description": `{"schema":"ceres-task-specification","version":1,"runTitle":"R","runDescription":" \u3000 ","cycleCount":1,` +
			`"tasks":[{"id":"p","type":"pause","label":"L","instructions":"I","durationS":0}]}`,
	}
}

// TestCanonicalFixedPoint checks that canonical bytes are unchanged by the
// jcs library's canonicaliser and by a parse round trip.
func TestCanonicalFixedPoint(t *testing.T) {
	t.Parallel()
	docs := awkwardDocuments()
	for _, name := range []string{"testdata/example.json", "testdata/tiny-session-spec.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = string(data)
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			s, err := Parse([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			canon := s.Canonical()
			viaLibrary, err := jcs.Transform(canon)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(viaLibrary, canon) {
				t.Errorf("jcs.Transform changes the canonical form:\n%s\n%s", canon, viaLibrary)
			}
			sum := sha256.Sum256(canon)
			assertEqual(t, "Hash", s.Hash(), hex.EncodeToString(sum[:]))
			assertReparses(t, s)
		})
	}
}

// nodeScript normalises each document as CERES does (String.prototype.trim
// on every string, a blank runDescription dropped), canonicalises it with
// the npm canonicalize package and hashes it with node's crypto; it also
// canonicalises bare number literals.
const nodeScript = `
const path = require('path');
const crypto = require('crypto');
const canonicalize = require(path.join(process.env.CERES_NPM_DIR, 'node_modules', 'canonicalize'));
const trimAll = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'string' ? v.trim() : v]));
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  const req = JSON.parse(input);
  const docs = req.docs.map((text) => {
    const spec = trimAll(JSON.parse(text));
    if (spec.runDescription === '') delete spec.runDescription;
    spec.tasks = spec.tasks.map(trimAll);
    const canon = Buffer.from(canonicalize(spec), 'utf8');
    return { canon: canon.toString('base64'), hash: crypto.createHash('sha256').update(canon).digest('hex') };
  });
  const numbers = req.numbers.map((lit) => canonicalize(JSON.parse(lit)));
  const whitespace = [];
  for (let c = 0; c <= 0xffff; c++) {
    if (String.fromCharCode(c).trim() === '') whitespace.push(c);
  }
  process.stdout.write(JSON.stringify({ docs, numbers, whitespace }));
});
`

// runNode runs nodeScript. It skips the test only when CERES_NPM_DIR is
// unset (failing instead with CERES_TEST_NO_SKIP=1); with it set, a
// missing node or package fails the test. -short (make check) skips it.
func runNode(t *testing.T, docs, numbers []string) (canon [][]byte, hashes, numText []string, whitespace []rune) {
	t.Helper()
	testenv.Short(t, "node and npm canonicalize")
	dir := os.Getenv("CERES_NPM_DIR")
	if dir == "" {
		testenv.Missing(t, "CERES_NPM_DIR is unset; `make test` sets it to run the cross-check against npm canonicalize")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "canonicalize", "package.json")); err != nil {
		t.Fatalf("CERES_NPM_DIR=%s but the canonicalize package is missing: %v", dir, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("CERES_NPM_DIR is set but node is missing: %v", err)
	}
	req, err := json.Marshal(map[string][]string{"docs": docs, "numbers": numbers})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "-e", nodeScript)
	cmd.Env = append(os.Environ(), "CERES_NPM_DIR="+dir)
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var resp struct {
		Docs []struct {
			Canon string `json:"canon"`
			Hash  string `json:"hash"`
		} `json:"docs"`
		Numbers    []string `json:"numbers"`
		Whitespace []rune   `json:"whitespace"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("node output: %v\n%s", err, out)
	}
	if len(resp.Docs) != len(docs) || len(resp.Numbers) != len(numbers) {
		t.Fatalf("node answered %d documents and %d numbers, want %d and %d", len(resp.Docs), len(resp.Numbers), len(docs), len(numbers))
	}
	for _, d := range resp.Docs {
		b, err := base64.StdEncoding.DecodeString(d.Canon)
		if err != nil {
			t.Fatal(err)
		}
		canon = append(canon, b)
		hashes = append(hashes, d.Hash)
	}
	return canon, hashes, resp.Numbers, resp.Whitespace
}

// TestCanonicalMatchesNode cross-checks Canonical, Hash and number
// formatting against an independent RFC 8785 implementation, the npm
// package canonicalize@2.0.0 under node.
func TestCanonicalMatchesNode(t *testing.T) {
	t.Parallel()
	named := awkwardDocuments()
	for _, name := range []string{"testdata/example.json", "testdata/tiny-session-spec.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		named[name] = string(data)
	}
	var names, docs []string
	for name, doc := range named {
		names = append(names, name)
		docs = append(docs, doc)
	}

	// Number literals: the awkward ones plus seeded random doubles over
	// the whole exponent range and random integers and decimals in the
	// range of the contract.
	numbers := []string{"12.50", "5e-7", "1e2", "2.0", "-0", "9007199254740991", "1e21", "1e-7", "1e-6",
		"999999999999999900000", "123e-20", "0.1", "4.35", "5e-324", "1.7976931348623157e308", "100e-9"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		numbers = append(numbers,
			strconv.FormatFloat(math.Float64frombits(rng.Uint64()&^(0x7ff<<52)|uint64(rng.IntN(0x7ff))<<52), 'g', -1, 64),
			strconv.FormatFloat(rng.Float64()*math.Pow10(rng.IntN(20)), 'g', -1, 64),
			strconv.FormatInt(rng.Int64N(MaxSafeInteger+1), 10),
			strconv.FormatInt(rng.Int64N(100000), 10)+"."+strconv.Itoa(rng.IntN(1000)),
		)
	}

	canon, hashes, numText, whitespace := runNode(t, docs, numbers)
	for i, name := range names {
		s, err := Parse([]byte(docs[i]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := s.Canonical(); !bytes.Equal(got, canon[i]) {
			t.Errorf("%s: canonical form differs from npm canonicalize:\n  go %q\nnode %q", name, got, canon[i])
		}
		if got := s.Hash(); got != hashes[i] {
			t.Errorf("%s: hash %s, node %s", name, got, hashes[i])
		}
		if name == "testdata/example.json" {
			t.Logf("contract example hash (node): %s", hashes[i])
		}
	}
	// String.prototype.trim's whitespace set, code unit by code unit
	// (no code point above U+FFFF is whitespace).
	isWhite := map[rune]bool{}
	for _, r := range whitespace {
		isWhite[r] = true
	}
	for r := rune(0); r <= 0x10ffff; r++ {
		if isJSWhitespace(r) != isWhite[r] {
			t.Errorf("U+%04X: isJSWhitespace %v, node trim %v", r, isJSWhitespace(r), isWhite[r])
		}
	}

	mismatches := 0
	for i, lit := range numbers {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		if got := formatNumber(f); got != numText[i] && mismatches < 10 {
			mismatches++
			t.Errorf("number %s: go %s, node %s", lit, got, numText[i])
		}
	}
}
