"""Query catalogs: the entries (one TOML file per query shape) and their ``:name`` parameters."""
