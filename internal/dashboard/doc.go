// Package dashboard is the scheduler's web dashboard: HTML pages served
// by the scheduler's HTTP listener under /dashboard/, with every asset
// embedded in the binary (it works offline, with no script at all).
//
//   - /dashboard/ lists the live trees;
//   - /dashboard/trees/{tree} shows the pool tree with fair share, usage
//     and demand per pool, the operation counts and limits, starvation,
//     the tree's alerts and the waiting operations with their pending
//     reasons and queue positions;
//   - /dashboard/trees/{tree}/pools/{pool} charts one pool over time, as
//     the seeds' figures do: usage against demand, usage against fair
//     share, and an integral pool's accumulated volume, in one resource
//     (?resource=cpu), with the pool's attributes;
//   - /dashboard/api/trees/{tree}/pools/{pool}/history is that history as
//     JSON.
//
// The history is kept in memory by the leading scheduler (History): a
// Sampler reads each tree's latest fair-share update every
// Config.Resolution and keeps Config.Window of samples of at most
// Config.MaxPools pools per tree. With an Archive (SetArchive), each
// sample is also appended to it, and a server that starts to lead loads it
// back before it samples, so that its charts go back as far as its
// predecessor's; without one it starts empty. The events stream keeps the
// durable record of fair shares (`sharetree events --kind fairshare`).
// Pages refresh themselves every Config.Refresh.
package dashboard
