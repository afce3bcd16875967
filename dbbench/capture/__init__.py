"""Capture: the statements an application actually runs, as a catalog.

Two sources, one result. :mod:`~dbbench.capture.recorder` records what a Python test session
executes through psycopg and PyMySQL (SQLAlchemy included), with the code and the test that issued
each statement (the pytest plugin's ``--dbbench-capture``); :mod:`~dbbench.capture.statistics` reads
what any client ran from the servers' own statement statistics (``pg_stat_statements``,
``performance_schema``'s statement digests; ``dbbench capture``). :mod:`~dbbench.capture.statements`
normalises both to shapes, and :mod:`~dbbench.capture.check` checks each against the catalog it
belongs to and writes the new ones down with the expectation their plan proposes.
"""
