"""`python -m llm_plans ...`: the same as the `llm-plans` command."""

from ._cli.main import main

raise SystemExit(main())
