"""The ticket desk: a small application whose SQL lives in db/queries.sql."""
