// Package tagfilter parses and evaluates a pool tree's node_tag_filter: a
// boolean expression over node tags that decides which exec nodes belong to
// the tree.
//
// Grammar (whitespace between tokens is ignored):
//
//	expr   = or
//	or     = and { "|" and }
//	and    = unary { "&" unary }
//	unary  = "!" unary | "(" expr ")" | TAG
//	TAG    = one or more of [A-Za-z0-9_-./:]
//
// "&" binds tighter than "|", and "!" tighter than both, as in the YTsaurus
// boolean formulas the seed's node_tag_filter uses ("gpu & !preemptible",
// "(rack1 | rack2) & ssd"). The empty expression matches every node.
// [Filter.String] prints the canonical form with the fewest parentheses, so a
// parsed filter round-trips through its string.
package tagfilter
