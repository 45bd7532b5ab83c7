// Package page renders ceres-export's HTML pages, each one self-contained
// file (no script, no network): the session page of a session, exported
// or not (WriteSession; export writes it into every shard at
// layout.SessionPagePath, and the report command writes it on its own),
// and the campaign page of a campaign directory (WriteCampaign). A page
// is not a report: the reports are the JSON records a run leaves
// (export.Report, merge.Report). docs/reports.md shows both pages.
package page
