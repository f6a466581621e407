"""Calls as they stream: each call's fragments, the partial-JSON scanner that finds what is
final in them, and the previews built from that. Builds on the core and the wire."""
