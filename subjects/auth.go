package subjects

// The subjects the NATS users of a secured server (see internal/natsauth)
// may use, by role. Scheduler and admins may use every subject.

// AgentInbox is the inbox prefix of node's agent: the only inbox its
// credential may subscribe to, so that it reads no other node's replies.
func AgentInbox(node string) (string, error) {
	if err := ValidateToken("node id", node); err != nil {
		return "", err
	}
	return "_INBOX_" + node, nil
}

// ClientInbox is the inbox prefix of the client whose NATS user is the
// nkey public key pub (a token: nkeys are upper-case base32).
func ClientInbox(pub string) (string, error) {
	if err := ValidateToken("client key", pub); err != nil {
		return "", err
	}
	return "_INBOX_" + pub, nil
}

// ClientRequests are the subjects a client may send requests to: the
// operation API, the orchid, the configuration's reads, and what reading
// the events stream with an ordered or a durable consumer takes.
func ClientRequests() []string {
	return []string{
		join(Prefix, "op", ">"),
		OrchidAll(),
		join(Prefix, "config", string(ConfigTrees)),
		join(Prefix, "config", string(ConfigGet)),
		ConfigTreeAll(TreeGet),
		ConfigTreeAll(TreePools),
		ConfigPoolAll(PoolGet),
		"$JS.API.STREAM.INFO." + EventsStream,
		"$JS.API.CONSUMER.CREATE." + EventsStream,
		"$JS.API.CONSUMER.CREATE." + EventsStream + ".>",
		"$JS.API.CONSUMER.INFO." + EventsStream + ".>",
		"$JS.API.CONSUMER.MSG.NEXT." + EventsStream + ".>",
		"$JS.API.CONSUMER.DELETE." + EventsStream + ".>",
		"$JS.ACK." + EventsStream + ".>",
	}
}
