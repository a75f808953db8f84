package gpu

// copyList is an intrusive doubly-linked list of device copies, one of the
// memory LRUs (mem.clean, mem.owned): the links live in the copies, so
// parking a copy whose last reader left, which happens once per task flow,
// allocates nothing. Only the manager touches it.
type copyList struct {
	first, last *devCopy
	n           int
}

// pushBack appends c, which is on no list.
func (l *copyList) pushBack(c *devCopy) {
	c.lruList, c.lruPrev, c.lruNext = l, l.last, nil
	if l.last != nil {
		l.last.lruNext = c
	} else {
		l.first = c
	}
	l.last = c
	l.n++
}

// remove takes c, which is on l, off it.
func (l *copyList) remove(c *devCopy) {
	if c.lruPrev != nil {
		c.lruPrev.lruNext = c.lruNext
	} else {
		l.first = c.lruNext
	}
	if c.lruNext != nil {
		c.lruNext.lruPrev = c.lruPrev
	} else {
		l.last = c.lruPrev
	}
	c.lruList, c.lruPrev, c.lruNext = nil, nil, nil
	l.n--
}

// front returns the least recently parked copy, or nil.
func (l *copyList) front() *devCopy { return l.first }

func (l *copyList) len() int { return l.n }

// reset forgets every element (the copies are being freed).
func (l *copyList) reset() { *l = copyList{} }
