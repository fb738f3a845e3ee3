"""One module per game, each reading like its section of RULES.md."""
