// Package cfgerr is the error a configuration's Validate returns for one
// bad field: the package's sentinel (actors.ErrConfig, loadgen.ErrConfig,
// ...), the field's name as written in Go ("HeartbeatPeriod",
// "Targets.P99") and what is wrong with it. The CLI maps the field to the
// flag that set it, so a bad flag is named as the user wrote it while the
// check itself lives once, in Validate.
package cfgerr
