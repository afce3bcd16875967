"""The measurement of a comparison, all of it timed or checked, none of it formatted.

:mod:`~httpbench.measure.compare` runs a comparison: the preflight
(:mod:`~httpbench.measure.preflight`: every target answers right before any clock), the timed HTTP
rounds (:mod:`~httpbench.measure.engine`, the timing client; rounds ordered by
:mod:`~httpbench.measure.schedule`, under the paired method :mod:`~httpbench.measure.paired`), the
real-client rounds (:mod:`~httpbench.measure.client_rounds`: a real program timed per sample), then
summaries, ratios and gates (:mod:`~httpbench.measure.gates`, with the descriptive numbers of
:mod:`~httpbench.measure.percentiles`).
"""
