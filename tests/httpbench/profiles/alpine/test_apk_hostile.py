"""The APK v2 format under hostile input: bounded work on bombs and floods of members (issue 13,
item 5), and signatures checked as apk-tools checks them (issue 13, item 6)."""

from __future__ import annotations

import http.server
import threading
import time
import tracemalloc
import zlib

import pytest

from httpbench.errors import HttpbenchError
from httpbench.profiles.alpine import apk
from tests.httpbench.profiles.alpine.apk_fixtures import KEY, META, pub

# ---------------------------------------------------------------------------------------------
# bounded work on hostile input (issue 13, item 5)


def gzip_bomb(mib: int) -> bytes:
    """One gzip member of ``mib`` MiB of zeros (about 1 KiB per MiB compressed)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * (1 << 20)
    return b"".join(deflate.compress(block) for _ in range(mib)) + deflate.flush()


@pytest.mark.servers
def test_a_gzip_bomb_stops_at_the_decompressed_limit_without_inflating_it():
    bomb = gzip_bomb(199)  # about 200 KB that inflate to 199 MiB
    assert len(bomb) < 250_000
    tracemalloc.start()
    try:
        with pytest.raises(
            apk.ApkError,
            match=r"decompress to more than 67,108,864 bytes, the limit "
            r"\(max_size",
        ) as info:
            apk.split_members(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "\n" not in str(info.value)
    assert peak < 100 << 20  # not the 199 MiB (and more) it cost before
    for parse in (apk.parse_index, apk.read_package):
        with pytest.raises(apk.ApkError, match="the limit"):
            parse(bomb)  # type: ignore[operator]


def test_the_decompressed_limit_is_a_parameter_and_covers_all_members():
    member = apk.gzip_member(b"a" * 10_000)
    assert len(apk.split_members(member, max_size=10_000)) == 1
    with pytest.raises(apk.ApkError, match="more than 9,999 bytes"):
        apk.split_members(member, max_size=9_999)
    with pytest.raises(apk.ApkError, match=r"^gzip member 2 at offset \d+: .*more than 15,000 bytes"):
        apk.split_members(member * 2, max_size=15_000)
    # the default grows with the input: 16x the compressed size, at least 64 MiB
    assert apk.decompressed_limit(1000) == 64 << 20
    assert apk.decompressed_limit(100 << 20) == 1600 << 20


@pytest.mark.servers
def test_many_tiny_members_split_in_linear_time():
    tiny = apk.gzip_member(b"x")
    data = tiny * 160_000  # 3.4 MB: quadratic splitting took 28 s, now 1.3 s
    started = time.perf_counter()
    members = apk.split_members(data)
    elapsed = time.perf_counter() - started
    assert len(members) == 160_000 and members[-1].offset == len(data) - len(tiny)
    assert {m.content for m in members} == {b"x"}
    assert elapsed < 8, f"{elapsed:.1f} s for 160,000 members"


def test_member_boundaries_are_exact_across_feeding_slices(keys):
    """Members of every size around the decompressor's input slices split where they end."""
    sizes = (1, 511, 512, 513, 4096, 70_000, 1_500_000)
    members = [apk.gzip_member(apk.payload(n, n)) for n in sizes]
    data = b"".join(members)
    split = apk.split_members(data)
    assert [m.raw for m in split] == members
    assert [len(m.content) for m in split] == list(sizes)
    with pytest.raises(apk.ApkError, match="gzip member 7 at offset .* is truncated"):
        apk.split_members(data[:-3])


# ---------------------------------------------------------------------------------------------
# signatures checked as apk-tools checks them (issue 13, item 6)


def test_an_index_naming_an_untrusted_key_fails_even_when_a_trusted_key_would_verify(keys, package):
    """apk opens /etc/apk/keys/<the name in the entry>; a trusted key under another name is never
    tried, even when its key material made the signature."""
    data = apk.build_index([apk.record_for(package)], private_key=keys[0], key_name="x.rsa.pub")
    trusted = {**pub(keys[0]), **pub(keys[1], "b.rsa.pub")}
    with pytest.raises(
        apk.ApkError,
        match=r"^untrusted signature: \.SIGN\.RSA\.x\.rsa\.pub names the key "
        r"'x\.rsa\.pub', which is not any given public key "
        r"\(b\.rsa\.pub, test\.rsa\.pub\); apk looks the key up by that name$",
    ):
        apk.parse_index(data, trusted)
    assert apk.parse_index(data, pub(keys[0], "x.rsa.pub")).signature.verified_with == "x.rsa.pub"


def test_a_package_is_checked_with_its_first_entry_naming_a_trusted_key(keys):
    unsigned = apk.split_members(apk.build_package({"a/b": b"x" * 100}, META, private_key=None).data)
    control, rest = unsigned[0].raw, unsigned[1].raw

    def entries(*signatures: apk.Signature) -> bytes:
        tar = b"".join(apk.tar_file(s.entry_name, s.value, mtime=0) for s in signatures)
        return apk.gzip_member(tar) + control + rest

    good = apk.sign(control, keys[0], KEY)
    other_name = apk.sign(control, keys[0], "elsewhere.rsa.pub")
    wrong_key = apk.sign(control, keys[1], KEY)
    # an entry naming an unknown key is skipped, as apk cannot open it
    assert apk.verify_package(apk.read_package(entries(other_name, good)), pub(keys[0])).verified_with == KEY
    # the first entry naming a trusted key is the one checked: a later good one does not rescue it
    with pytest.raises(apk.ApkError, match="does not verify with the public key of that name"):
        apk.verify_package(apk.read_package(entries(wrong_key, good)), pub(keys[0]))
    with pytest.raises(apk.ApkError, match="untrusted"):
        apk.verify_package(apk.read_package(entries(other_name)), pub(keys[0]))


def no_datahash_package(private: bytes, files: dict[str, bytes], *, cover_data: bool = False) -> bytes:
    """A package whose .PKGINFO has no datahash, signed over its control member (or, with
    ``cover_data``, over control and data: the older v2 form apk verifies that way)."""
    data = apk.data_member(files, mtime=0)
    text = apk.pkginfo_text(META, sum(map(len, files.values())), "")
    assert "datahash" not in text
    control = apk.gzip_member(apk.tar_file(".PKGINFO", text.encode(), mtime=0))
    signed = control + data if cover_data else control
    return apk.signature_member(apk.sign(signed, private, KEY), mtime=0) + control + data


def test_a_package_without_datahash_does_not_verify_against_any_data_member(keys):
    files = {"usr/bin/tool": b"real tool\n"}
    honest = no_datahash_package(keys[0], files)
    evil = no_datahash_package(keys[0], {"usr/bin/tool": b"another tool\n"})
    members = apk.split_members(honest)
    # the same signature and control member in front of another data member
    swapped = members[0].raw + members[1].raw + apk.split_members(evil)[2].raw
    for data in (honest, swapped):
        package = apk.read_package(data)
        assert package.datahash is None
        with pytest.raises(
            apk.ApkError,
            match=r"^package: \.PKGINFO has no datahash, so the signature "
            r"must cover the control and data members .*bad signature",
        ):
            apk.verify_package(package, pub(keys[0]))
    # signed over control and data (what apk checks without datahash): verifies, and only that data
    legacy = no_datahash_package(keys[0], files, cover_data=True)
    assert apk.verify_package(apk.read_package(legacy), pub(keys[0])).verified_with == KEY
    legacy_members = apk.split_members(legacy)
    other = legacy_members[0].raw + legacy_members[1].raw + apk.split_members(evil)[2].raw
    with pytest.raises(apk.ApkError, match="no datahash"):
        apk.verify_package(apk.read_package(other), pub(keys[0]))


@pytest.fixture
def repo_server(tmp_path):
    """A real HTTP server on 127.0.0.1 serving ``tmp_path/www`` (a repository tree)."""
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, format, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.servers
def test_apk_client_refuses_an_untrusted_index_key_and_a_package_without_datahash(
    keys, repo_server, tmp_path
):
    from httpbench.profiles.alpine import apk_client

    root, url = repo_server
    keys_dir = tmp_path / "keys"
    keys_dir.mkdir()
    (keys_dir / KEY).write_bytes(apk.public_key_pem(keys[0]))
    trusted = apk_client.trusted_keys(keys_dir)
    arch = root / "main" / "x86_64"
    arch.mkdir(parents=True)
    package = apk.read_package(no_datahash_package(keys[0], {"usr/bin/tool": b"tool\n"}))
    (arch / package.file_name).write_bytes(package.data)
    record = apk.record_for(package)
    # signed with the trusted key's material, but naming a key file apk does not have
    (arch / "APKINDEX.tar.gz").write_bytes(
        apk.build_index([record], private_key=keys[0], key_name="x.rsa.pub")
    )
    with pytest.raises(
        HttpbenchError, match=r"APKINDEX\.tar\.gz: untrusted signature: .*'x\.rsa\.pub'"
    ) as err:
        apk_client.flow(f"{url}/main", "x86_64", trusted, package.name, timeout=5)
    assert err.value.exit_code == 1 and "\n" not in str(err.value)
    # a trusted index, but the package's signature covers only its control member and no datahash
    # ties the data to it
    (arch / "APKINDEX.tar.gz").write_bytes(apk.build_index([record], private_key=keys[0], key_name=KEY))
    assert (
        apk_client.flow(f"{url}/main", "x86_64", trusted, package.name, fetch=False, timeout=5)["key"] == KEY
    )
    with pytest.raises(HttpbenchError, match=r"\.apk: package: \.PKGINFO has no datahash") as err:
        apk_client.flow(f"{url}/main", "x86_64", trusted, package.name, timeout=5)
    assert err.value.exit_code == 1
