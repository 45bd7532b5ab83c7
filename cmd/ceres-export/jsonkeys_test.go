package main

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/batch"
	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/merge"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/verify"
	"github.com/ceres-robotics/ceres-export/internal/version"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// snakeKey is the one convention of the keys of every --json document.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// ownFormats are the records a --json document embeds that are formats of
// their own, documented with their keys: the journal's and the task
// specification's records, the export report every shard holds and the
// plan in it. They keep their keys and are not walked.
var ownFormats = map[reflect.Type]bool{
	reflect.TypeOf(export.Report{}): true,
	reflect.TypeOf(plan.Plan{}):     true,
}

// specCheckTypes are the taskspec types of spec check's document, which
// are the command's and follow its convention, unlike the specification.
var specCheckTypes = map[reflect.Type]bool{
	reflect.TypeOf(taskspec.Check{}):     true,
	reflect.TypeOf(taskspec.Violation{}): true,
}

// TestJSONKeysSnakeCase walks the types of every command's --json
// document and names each key that is not snake_case (ownFormats aside).
func TestJSONKeysSnakeCase(t *testing.T) {
	docs := map[string]any{
		"export":          exportSummary{},
		"merge":           merge.Result{},
		"verify":          verify.Document{},
		"journal inspect": plan.Inspection{},
		"spec check":      []taskspec.Check{},
		"version":         version.Report{},
		"batch":           batch.Document{},
		"batch plan":      batch.Plan{},
		"batch status":    campaign.CampaignStatus{},
		"synth":           synth.Result{},
	}
	for name, doc := range docs {
		seen := map[reflect.Type]bool{}
		var walk func(path string, typ reflect.Type)
		walk = func(path string, typ reflect.Type) {
			for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
				typ = typ.Elem()
			}
			if typ.Kind() != reflect.Struct || seen[typ] || ownFormats[typ] || strings.HasSuffix(typ.PkgPath(), "/journal") || (strings.HasSuffix(typ.PkgPath(), "/taskspec") && !specCheckTypes[typ]) || typ.PkgPath() == "time" {
				return
			}
			seen[typ] = true
			for i := range typ.NumField() {
				f := typ.Field(i)
				key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if key == "-" || !f.IsExported() {
					continue
				}
				if f.Anonymous && key == "" {
					walk(path, f.Type)
					continue
				}
				if key == "" {
					key = f.Name
				}
				if !snakeKey.MatchString(key) {
					t.Errorf("%s --json: %s.%s: key %q is not snake_case", name, path, f.Name, key)
				}
				walk(path+"."+key, f.Type)
			}
		}
		walk(reflect.TypeOf(doc).String(), reflect.TypeOf(doc))
	}
}
