"""The key name, package metadata and trusted-key map shared by the APK format tests (the keys,
package and index fixtures are in conftest.py)."""

from __future__ import annotations

from httpbench.profiles.alpine import apk

KEY = "test.rsa.pub"
META = apk.PackageMeta("bench-pkg", "1.2.3-r4", "x86_64")


def pub(private: bytes, name: str = KEY) -> dict[str, bytes]:
    return {name: apk.public_key_pem(private)}
