package dynamic

// CountRecords turns on the count of task records taken by insertions and not yet released,
// and returns a function reading it.
func CountRecords() func() int64 {
	countRecords = true
	return liveRecords.Load
}

// Live returns the tasks inserted from outside a body and not yet done.
func (g *Graph) Live() int64 { return g.live() }
