package scheduler

import "fmt"

// The range of every resource amount the engine accepts. The engine's
// arithmetic divides amounts by cluster totals, sums and scales the shares
// and multiplies them by durations; amounts anywhere in float64's range
// (1e-300 of a cpu beside 1e300 bytes of memory) made those shares
// overflow to infinities and NaN, on which the fit-factor sweep never
// ended. With amounts bounded, every share lies within
// [MinAmount/MaxClusterAmount, MaxAmount/MinAmount] (1e-34 to 1e27), far
// from float64's limits whatever the engine computes from them.
const (
	// MinAmount is the smallest positive amount: a billionth of a cpu, of
	// a byte or of a slot (smaller amounts are 0).
	MinAmount = 1e-9
	// MaxAmount is the largest amount of one resource given anywhere but
	// in a cluster total: an exabyte of memory, 10^18 cpus.
	MaxAmount = 1e18
	// MaxClusterAmount is the largest cluster total of one resource: ten
	// million nodes of MaxAmount each.
	MaxClusterAmount = 1e25
	// MaxVolume is the largest accumulated volume of one resource in a
	// pool's state (resource·seconds): MaxAmount over three centuries.
	MaxVolume = 1e28
	// MaxShareRatio is the largest integral share ratio in a pool's state:
	// no share exceeds MaxAmount/MinAmount.
	MaxShareRatio = MaxAmount / MinAmount
)

// ValidAmount reports whether v is an amount the engine accepts: 0 or a
// number in [MinAmount, MaxAmount] (never NaN or infinite).
func ValidAmount(v float64) bool { return v == 0 || v >= MinAmount && v <= MaxAmount }

// AmountRule is what ValidAmount requires, for error messages.
var AmountRule = fmt.Sprintf("must be 0 or a number in [%g, %g]", MinAmount, MaxAmount)

// validTotal reports whether v is a cluster total the engine accepts: 0 or
// a number in [MinAmount, MaxClusterAmount].
func validTotal(v float64) bool { return v == 0 || v >= MinAmount && v <= MaxClusterAmount }

// ValidVolume reports whether v is an accumulated volume (of one
// resource, resource·seconds) the engine accepts: a number in
// [0, MaxVolume] (never NaN).
func ValidVolume(v float64) bool { return v >= 0 && v <= MaxVolume }

// VolumeRule is what ValidVolume requires, for error messages.
var VolumeRule = fmt.Sprintf("must be a number in [0, %g]", float64(MaxVolume))
