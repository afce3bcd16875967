"""Index advice verified on the data (``dbbench advise``): candidate indexes derived from a shape's
query, each built for real in the namespace dbbench owns (PostgreSQL: inside a transaction that is
rolled back; MySQL: added, then dropped, with what is in flight recorded so that an interrupted run
is undone by the next command), measured, and never left behind."""
