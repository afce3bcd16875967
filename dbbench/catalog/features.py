"""The plan features a catalog may forbid (a full scan, a sort, a temporary table), in the
canonical names the catalog files use; :mod:`dbbench.measure.expect` checks a plan against them."""

from __future__ import annotations

FEATURES = ("full_scan", "sort", "temp_table")
# The servers' own words for the features, accepted wherever a feature is forbidden.
FEATURE_ALIASES = {
    "seq_scan": "full_scan",
    "table_scan": "full_scan",
    "filesort": "sort",
    "temporary": "temp_table",
}


def normalize_forbid(items) -> list[str]:
    """Forbid entries in canonical form: ``full_scan``, ``full_scan:TABLE``, ``sort``, ``temp_table``
    (``seq_scan``/``table_scan``, ``filesort`` and ``temporary`` are accepted as the servers' names).
    Raises ValueError naming the first entry that is none of these."""
    if isinstance(items, str):
        items = [items]
    out = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"{item!r} is not a feature name")
        feature, colon, table = item.partition(":")
        feature = FEATURE_ALIASES.get(feature, feature)
        if feature not in FEATURES or (colon and (feature != "full_scan" or not table)):
            allowed = ", ".join([*FEATURES, *FEATURE_ALIASES])
            raise ValueError(
                f"{item!r} is not one of {allowed} (full_scan:TABLE limits a full scan to one table)"
            )
        out.append(f"{feature}:{table}" if colon else feature)
    return out
