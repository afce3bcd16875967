"""Fixtures of the APK format tests: the keys, package and index (``test_apk*.py`` here)."""

from __future__ import annotations

import pytest

from httpbench.profiles.alpine import apk
from tests.httpbench.profiles.alpine.apk_fixtures import KEY, META


@pytest.fixture(scope="module")
def keys():
    """Two 2048-bit keys, generated once for the module."""
    return apk.generate_private_key(), apk.generate_private_key()


@pytest.fixture(scope="module")
def package(keys):
    return apk.build_sized_package(300_000, META, seed=7, private_key=keys[0], key_name=KEY)


@pytest.fixture(scope="module")
def index(keys, package):
    return apk.build_index(
        [apk.record_for(package)], private_key=keys[0], key_name=KEY, description="v3.23/main test"
    )
