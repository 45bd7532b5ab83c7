package shard

// appendValues appends v to c's values (tests build columns this way).
func appendValues[T any](c *ColumnData, v ...T) { SetValues(c, append(Values[T](c), v...)) }
