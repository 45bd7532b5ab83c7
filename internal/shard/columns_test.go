package shard

// Typed access to columns that only tests need: the exporter and merge fill
// columns through the dtype table (ColumnData's methods).

// ColumnOf is a column holding v.
func ColumnOf[T any](v []T) ColumnData { return ColumnData{v: v} }

// SetValues makes c hold v.
func SetValues[T any](c *ColumnData, v []T) { c.v = v }

// ColumnIndex returns the index in EpisodeRows.Columns of the data feature
// name, or -1 when there is none (unknown name or a video feature).
func (b *Builder) ColumnIndex(name string) int {
	for i, f := range b.dataCols {
		if f.Name == name {
			return i
		}
	}
	return -1
}
