package ce

import "time"

// WorldHoldAM exports worldConfig.holdAM to the tests of package ce_test: hold says how long
// an AM from src to dst on tag stays in flight after its send completed (zero: not held).
func WorldHoldAM(hold func(src, dst Rank, tag Tag) time.Duration) WorldOption {
	return func(c *worldConfig) { c.holdAM = hold }
}
