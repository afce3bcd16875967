"""Alpine APK v2 repositories, all of the protocol in one place: the format
(:mod:`~httpbench.profiles.alpine.apk`), apk's client flow (:mod:`~httpbench.profiles.alpine.apk_client`),
the deterministic repository tree (:mod:`~httpbench.profiles.alpine.fixture`), the ``--profile
alpine`` checks and scenarios (:mod:`~httpbench.profiles.alpine.profile`) and the nginx-vs-caddy
demo (:mod:`~httpbench.profiles.alpine.demo`)."""
