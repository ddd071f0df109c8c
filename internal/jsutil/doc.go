// Package jsutil holds what sharetree's JetStream users share about
// JetStream's answers.
package jsutil
