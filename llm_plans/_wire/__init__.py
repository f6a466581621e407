"""What the client receives: the wire forms, the flattening into ACP's legacy list, the
outbox that sends only what changed, subagents' child sessions, and the ACP SDK binding.
Builds on the core; knows no session and no stream."""
