//go:build cgo

package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// The private fixture's strings repeat themselves, so that Snappy stores them
// as back-references, not as literal bytes: a leak planted in a compressed
// Parquet page is then visible only to a scan of the decoded values.
const (
	privRunTitle     = "Tray tray tray tray tray tray sorting"
	privInstructions = "Pick pick pick pick pick pick pick the part"
)

var privSpec = `{"schema":"ceres-task-specification","version":1,"runTitle":"` + privRunTitle + `",
 "runDescription":"Sort every part of the tray","cycleCount":1,"tasks":[
 {"id":"pick","type":"timed","label":"Pick","instructions":"` + privInstructions + `","durationS":10,"repeatCount":2,"resetTimeS":5},
 {"id":"check","type":"open","label":"Check","instructions":"Check the part until done","repeatCount":1,"resetTimeS":5}]}`

type privateFixture struct {
	session, shard string
	err            error
}

var (
	privateOnce sync.Once
	privateFx   privateFixture
)

// privateShard is a metadata-only export (salt "pepper") of a one-camera
// session of privSpec.
func privateShard(t *testing.T) privateFixture {
	t.Helper()
	privateOnce.Do(func() {
		root, err := os.MkdirTemp("", "verify-private-")
		if err != nil {
			privateFx.err = err
			return
		}
		f := privateFixture{session: filepath.Join(root, "session"), shard: filepath.Join(root, "shard")}
		ctx := context.Background()
		if _, f.err = synth.Write(ctx, f.session, synth.Options{Seed: 3, Spec: []byte(privSpec), TimeScale: 0.2, Cameras: 1, Width: 64, Height: 48}); f.err == nil {
			_, f.err = export.Export(ctx, f.session, f.shard, export.Options{Privacy: privacy.MetadataOnly, Salt: "pepper"})
		}
		privateFx = f
	})
	if privateFx.err != nil {
		t.Fatalf("building the metadata-only fixture: %v", privateFx.err)
	}
	return privateFx
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "shard")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func privacyCodes(t *testing.T, shard, session string, salt string) []string {
	t.Helper()
	res, err := shardVideo(context.Background(), shard, Options{Journal: session, Privacy: privacy.MetadataOnly, Salt: salt, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, f := range res.Findings {
		if f.Severity == SeverityError {
			codes = append(codes, f.Code+" "+f.File+": "+f.Message)
		}
	}
	return codes
}

func TestPrivacyCleanExport(t *testing.T) {
	f := privateShard(t)
	if errs := privacyCodes(t, f.shard, f.session, "pepper"); len(errs) > 0 {
		t.Fatalf("clean metadata-only export has findings:\n%s", strings.Join(errs, "\n"))
	}
	// The full verify of the same dataset (not only the privacy group).
	res, err := shardVideo(context.Background(), f.shard, Options{Journal: f.session, Salt: "pepper"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Sound {
		t.Errorf("metadata-only export is not sound:\n%s", findingLines(res))
	}
	// Without the salt the salted session ids cannot be compared.
	if errs := privacyCodes(t, f.shard, f.session, ""); !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "needs --salt") }) {
		t.Errorf("verify --journal without --salt: %v", errs)
	}
	if _, err := os.Stat(filepath.Join(f.shard, "videos")); !os.IsNotExist(err) {
		t.Errorf("metadata-only export has videos/ (%v)", err)
	}
}

func TestPrivacyFindsPlantedLeaks(t *testing.T) {
	f := privateShard(t)
	spec, err := taskspec.Parse([]byte(privSpec))
	if err != nil {
		t.Fatal(err)
	}
	appendTo := func(rel, text string) func(t *testing.T, s string) {
		return func(t *testing.T, s string) {
			p := filepath.Join(s, filepath.FromSlash(rel))
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, append(b, text...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		plant  func(t *testing.T, shard string)
		code   string
		file   string
		needle string
	}{
		{"instructions in the export report", appendTo("ceres/export-report.json", `{"note":"`+privInstructions+`"}`), "privacy.leak", "ceres/export-report.json", privInstructions},
		{"run title in a new file", appendTo("ceres/notes.txt", privRunTitle), "privacy.leak", "ceres/notes.txt", privRunTitle},
		{"session id in meta/info.json", func(t *testing.T, s string) {
			j := filepath.Join(s, "meta", "info.json")
			b, _ := os.ReadFile(j)
			b = bytes.Replace(b, []byte(`"robot_type": `), []byte(`"robot_type": "`+sessionIDOf(t, f.session)+`", "x": `), 1)
			os.WriteFile(j, b, 0o644)
		}, "privacy.leak", "meta/info.json", ""},
		{"instructions in a compressed Parquet column", func(t *testing.T, s string) {
			p := filepath.Join(s, "meta", "episodes", "chunk-000", "file-000.parquet")
			// Without statistics: their min and max are stored uncompressed.
			mutateParquet(t, p, func(m *mtable) {
				m.mapString("ceres/task_label", func(int, string) string { return privInstructions })
			}, parquet.WithStats(false))
			raw, _ := os.ReadFile(p)
			if bytes.Contains(raw, []byte(privInstructions)) {
				t.Fatal("the planted string is stored literally: this case would not test the decoded scan")
			}
		}, "privacy.leak", "meta/episodes/chunk-000/file-000.parquet", privInstructions},
		// Verify compares as the label rule does.
		{"upper-cased session id in a campaign file", func(t *testing.T, s string) {
			os.WriteFile(filepath.Join(s, "ceres", "campaign.json"), []byte(`{"campaign_id":"h-0123456789abcdef0123456789abcdef","task_id":"`+
				strings.ToUpper(sessionIDOf(t, f.session))+`","attempt_no":1}`), 0o644)
		}, "privacy.leak", "ceres/campaign.json", ""},
		{"upper-cased run title in the card", appendTo("README.md", "\n"+strings.ToUpper(privRunTitle)+"\n"), "privacy.leak", "README.md", privRunTitle},
		{"\\u00XX-escaped instructions", appendTo("ceres/export-report.json", `{"note":"`+strings.ReplaceAll(privInstructions, "p", `\u0070`)+`"}`), "privacy.leak", "ceres/export-report.json", privInstructions},
		{"full-width run title", appendTo("ceres/notes.json", `{"t":"`+fullWidth(privRunTitle)+`"}`), "privacy.leak", "ceres/notes.json", privRunTitle},
		{"session id with an id's separators in a Parquet value", func(t *testing.T, s string) {
			p := filepath.Join(s, "meta", "episodes", "chunk-000", "file-000.parquet")
			id := strings.NewReplacer("-", "_", " ", "__").Replace(strings.ToUpper(sessionIDOf(t, f.session)))
			mutateParquet(t, p, func(m *mtable) {
				m.mapString("ceres/task_label", func(int, string) string { return "week__" + id + "__run-1" })
			}, parquet.WithStats(false))
		}, "privacy.leak", "meta/episodes/chunk-000/file-000.parquet", ""},
		{"a case id in the campaign file", func(t *testing.T, s string) {
			os.WriteFile(filepath.Join(s, "ceres", "campaign.json"), []byte(`{"campaign_id":"h-0123456789abcdef0123456789abcdef","task_id":"week__rig3-0412__av1__run-1","attempt_no":1}`), 0o644)
		}, "privacy.user-string", "ceres/campaign.json", "rig3-0412"},
		{"an extension value", func(t *testing.T, s string) {
			os.WriteFile(filepath.Join(s, "ceres", "extensions.json"), []byte(`{"org.lab.owner":"ana","org.lab.n":3}`), 0o644)
		}, "privacy.user-string", "ceres/extensions.json", `"ana"`},
		{"unredacted specification", func(t *testing.T, s string) {
			os.MkdirAll(filepath.Join(s, "ceres", "task-specifications"), 0o755)
			os.WriteFile(filepath.Join(s, "ceres", "task-specifications", spec.Hash()+".json"), spec.Canonical(), 0o644)
		}, "privacy.specification", "", ""},
		{"marker removed", func(t *testing.T, s string) {
			os.Remove(filepath.Join(s, filepath.FromSlash(layout.PrivacyMarkerPath)))
		}, "privacy.marker", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shard := copyDir(t, f.shard)
			tc.plant(t, shard)
			errs := privacyCodes(t, shard, f.session, "pepper")
			found := slices.ContainsFunc(errs, func(e string) bool {
				return strings.HasPrefix(e, tc.code+" "+tc.file) && strings.Contains(e, tc.needle)
			})
			if !found {
				t.Errorf("no %s finding for %s; errors:\n%s", tc.code, tc.file, strings.Join(errs, "\n"))
			}
		})
	}
}

// TestPrivacyRejectsAFullExport: an ordinary export fails every privacy rule.
func TestPrivacyRejectsAFullExport(t *testing.T) {
	f := goodShard(t)
	errs := privacyCodes(t, f.shard, f.session, "")
	for _, code := range []string{"privacy.marker", "privacy.video", "privacy.specification", "privacy.leak"} {
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, code+" ") }) {
			t.Errorf("no %s finding on a full export; errors:\n%s", code, strings.Join(errs, "\n"))
		}
	}
}

// fullWidth writes ASCII letters and spaces in their full-width forms,
// which NFKC maps back.
func fullWidth(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ':
			return '\u3000'
		case r > ' ' && r < 0x7f:
			return r - 0x21 + 0xff01
		}
		return r
	}, s)
}

func sessionIDOf(t *testing.T, session string) string {
	t.Helper()
	j, err := journal.Open(context.Background(), session, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return j.Info.SessionID
}
