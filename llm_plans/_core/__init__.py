"""The core: a plan tool call and the session's plans in, the next plans or the problems out.

Pure and synchronous. It knows no session, stream, wire form or provider: the tool and
outcome types, argument parsing and repair, the rules every plan is built by, the plans
themselves, the results the model reads, snapshots and prompts.
"""
