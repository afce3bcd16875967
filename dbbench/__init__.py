"""dbbench: index-regression checks for SQL query catalogs on PostgreSQL and MySQL.

The library is the product; the ``dbbench`` command is a thin layer over it.
"""

from dbbench.assertions import PlanAssertionError, assert_plan
from dbbench.errors import DbbenchError
from dbbench.targets import Target, connect

__version__ = "0.1.0"

__all__ = ["DbbenchError", "PlanAssertionError", "Target", "assert_plan", "connect", "__version__"]
