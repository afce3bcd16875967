"""What a comparison is asked, as the run's :class:`~httpbench.measure.compare.Config`: the options
of ``httpbench compare`` as a typed :class:`~httpbench.config.build.CompareOptions`, checked and
built into a run by :func:`~httpbench.config.build.build_config` (every input error before any
round); the targets and their credentials (:mod:`~httpbench.config.targets`); scenarios and gates
from options or a TOML file (:mod:`~httpbench.config.scenarios`)."""
