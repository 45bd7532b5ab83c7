package page

import (
	"embed"
	"html/template"
	"strings"
)

//go:embed templates/*.html templates/page.css
var templateFS embed.FS

// pageTemplates are the session and campaign pages. Everything a page
// needs is inline (style, charts as SVG, thumbnails as data URIs): a page
// is one file that opens from file:// with no network and no script.
var pageTemplates = template.Must(template.New("pages").Funcs(template.FuncMap{
	"css": func() template.CSS {
		b, err := templateFS.ReadFile("templates/page.css")
		if err != nil {
			panic(err) // embedded at build time
		}
		return template.CSS(b) // #nosec: our own file
	},
	"short": func(hash string) string {
		if len(hash) > 12 {
			return hash[:12]
		}
		return hash
	},
	"lower": strings.ToLower,
}).ParseFS(templateFS, "templates/*.html"))
