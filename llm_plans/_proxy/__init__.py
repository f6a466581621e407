"""`llm-plans proxy`: an ACP agent in front of another, relaying every message in order and
upgrading the plans the agent sends (or only shows in its tool calls) to the best form the
client negotiated.

`lines` frames the byte streams into NDJSON lines, `relay` runs the agent and the two pumps,
`agents` says which agent is on the other side and what its plan signals look like, and
`upgrade` turns those signals into a session's plans, through a `PlanSession` per ACP session.
docs/proxy.md says what the proxy changes and what it never does.
"""
