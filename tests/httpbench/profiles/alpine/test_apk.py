"""The APK v2 format in httpbench.profiles.alpine.apk: packages and signed indexes built, read back and rejected.

Read-back goes through independent parsers too (Python's ``gzip``/``tarfile`` reading the whole
file as one tar stream, and ``cryptography`` verifying by hand), so the format is not only checked
against itself.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import tarfile

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

from httpbench.errors import HttpbenchError
from httpbench.profiles.alpine import apk
from tests.httpbench.profiles.alpine.apk_fixtures import KEY, META, pub


@pytest.mark.servers
def test_package_layout_three_members_signature_control_data(package, keys):
    members = apk.split_members(package.data)
    assert len(members) == 3
    assert b"".join(m.raw for m in members) == package.data
    sig_tar, control_tar, data_tar = (m.content for m in members)
    # signature and control tars have their end-of-archive blocks cut, data keeps them
    assert len(sig_tar) == 512 + 512 and sig_tar[-512:].strip(b"\0")
    assert control_tar[-512:].strip(b"\0") and data_tar.endswith(b"\0" * 1024)
    # the signature is RSA PKCS#1 v1.5 over SHA-1 of the compressed control member
    sig = apk.read_tar(sig_tar, "sig")[0]
    assert sig.name == f".SIGN.RSA.{KEY}" and len(sig.data) == 256
    public = serialization.load_pem_public_key(apk.public_key_pem(keys[0]))
    public.verify(sig.data, members[1].raw, padding.PKCS1v15(), hashes.SHA1())
    # datahash = SHA-256 of the compressed data member
    assert package.datahash == hashlib.sha256(members[2].raw).hexdigest()
    assert f"datahash = {package.datahash}" in apk.read_tar(control_tar, "c")[0].data.decode()


def test_package_reads_as_one_tar_stream_with_checksums(package):
    """What apk-tools sees: the members decompressed back to back are one tar."""
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(package.data)), mode="r:") as tar:
        names = [m.name for m in tar]
        payload = tar.getmember("usr/share/bench-pkg/payload.bin")
        body = tar.extractfile(payload).read()
    assert names == [
        f".SIGN.RSA.{KEY}",
        ".PKGINFO",
        "usr",
        "usr/share",
        "usr/share/bench-pkg",
        "usr/share/bench-pkg/payload.bin",
    ]
    assert payload.pax_headers[apk.CHECKSUM_PAX_KEY] == hashlib.sha1(body).hexdigest()
    assert len(body) == package.installed_size


def test_package_size_payload_and_determinism(package, keys):
    assert abs(package.size - 300_000) <= 4
    assert package.installed_size > 0.99 * package.size  # incompressible payload
    body = apk.payload(package.installed_size, 7)
    slices = {body[i : i + 65536] for i in range(0, len(body) - 65536, 65536)}
    assert len(slices) == len(body) // 65536  # every 64 KiB slice differs
    again = apk.build_sized_package(300_000, META, seed=7, private_key=keys[0], key_name=KEY)
    assert again.data == package.data
    other = apk.build_sized_package(300_000, META, seed=8, private_key=keys[0], key_name=KEY)
    assert other.data != package.data


def test_identity_is_q1_of_the_control_member_and_matches_index(package, index, keys):
    control = apk.split_members(package.data)[1].raw
    expected = "Q1" + base64.b64encode(hashlib.sha1(control).digest()).decode()
    assert package.identity == expected == apk.package_identity(package.data)
    parsed = apk.parse_index(index, pub(keys[0]))
    assert parsed.records[0].identity == package.identity
    assert parsed.records[0].logical == ("bench-pkg", "1.2.3-r4", package.size, package.installed_size)


def test_package_signature_verifies_only_with_its_key(package, keys):
    verified = apk.verify_package(package, pub(keys[0]))
    assert (verified.algorithm, verified.verified_with) == ("RSA", KEY)
    # no key of that name: untrusted, even though the key under another name would verify
    with pytest.raises(
        apk.ApkError,
        match=r"^package signature is untrusted: \.SIGN\.RSA\.test\.rsa\.pub "
        r"names no given public key \(other\.rsa\.pub\)",
    ):
        apk.verify_package(package, pub(keys[0], "other.rsa.pub"))
    with pytest.raises(apk.ApkError, match="does not verify with the public key of that name"):
        apk.verify_package(package, pub(keys[1]))
    unsigned = apk.build_package({"a/b": b"x" * 100}, META, private_key=None)
    assert not unsigned.signatures and len(apk.split_members(unsigned.data)) == 2
    assert unsigned.identity == apk.identity_of(apk.split_members(unsigned.data)[0].raw).text
    with pytest.raises(apk.ApkError, match="unsigned"):
        apk.verify_package(unsigned, pub(keys[0]))


def test_package_datahash_mismatch_is_rejected(package):
    members = apk.split_members(package.data)
    tampered = apk.gzip_member(members[2].content[:-1024] + b"\1" + b"\0" * 1023)
    with pytest.raises(apk.ApkError, match="datahash"):
        apk.read_package(members[0].raw + members[1].raw + tampered)


def test_package_control_member_must_be_cut(package):
    members = apk.split_members(package.data)
    uncut = apk.gzip_member(members[1].content + apk.EOF_BLOCKS)
    with pytest.raises(apk.ApkError, match="control member keeps its tar end-of-archive blocks"):
        apk.read_package(members[0].raw + uncut + members[2].raw)
    assert apk.tar_is_cut(members[0].content) and not apk.tar_is_cut(members[2].content)


def test_index_layout_and_round_trip(index, keys, package):
    members = apk.split_members(index)
    assert len(members) == 2
    sig = apk.read_tar(members[0].content, "sig")
    assert [e.name for e in sig] == [f".SIGN.RSA.{KEY}"]
    public = serialization.load_pem_public_key(apk.public_key_pem(keys[0]))
    public.verify(sig[0].data, members[1].raw, padding.PKCS1v15(), hashes.SHA1())
    assert [e.name for e in apk.read_tar(members[1].content, "idx")] == ["DESCRIPTION", "APKINDEX"]
    parsed = apk.parse_index(index, pub(keys[0]))
    assert parsed.verified and parsed.signature.verified_with == KEY
    assert parsed.description == "v3.23/main test" and parsed.size == len(index)
    text = apk.index_text(parsed.records)
    assert text.startswith(f"C:{package.identity}\nP:bench-pkg\nV:1.2.3-r4\nA:x86_64\nS:{package.size}\n")
    assert text.endswith("\n\n")
    for key in ("T:", "U:", "L:MIT", "o:bench-pkg", "m:", "t:1767225600"):
        assert f"\n{key}" in text
    assert (
        apk.build_index(parsed.records, private_key=keys[0], key_name=KEY, description="v3.23/main test")
        == index
    )


def test_index_rsa256_and_key_choice(keys, package):
    data = apk.build_index(
        [apk.record_for(package)], private_key=keys[1], key_name="b.rsa.pub", algorithm="RSA256"
    )
    parsed = apk.parse_index(data, {**pub(keys[0]), **pub(keys[1], "b.rsa.pub")})
    assert (parsed.signature.algorithm, parsed.signature.digest) == ("RSA256", "sha256")
    assert parsed.signature.verified_with == "b.rsa.pub"
    # structure only, without keys
    assert not apk.parse_index(data).verified


def flip(data: bytes, offset: int) -> bytes:
    return data[:offset] + bytes([data[offset] ^ 0x01]) + data[offset + 1 :]


def test_flipped_byte_in_index_fails_the_signature(index, keys):
    second = apk.split_members(index)[1].offset
    # a byte of the index member's gzip header (MTIME) changes the signed bytes, not the content
    with pytest.raises(apk.ApkError, match="bad signature"):
        apk.parse_index(flip(index, second + 4), pub(keys[0]))
    # a byte of the compressed stream: corrupt gzip or a bad signature, never accepted
    with pytest.raises(apk.ApkError, match="bad signature|corrupt|gzip member 2"):
        apk.parse_index(flip(index, second + 40), pub(keys[0]))
    # a different, validly compressed index behind the old signature
    members = apk.split_members(index)
    content = members[1].content.replace(b"v3.23/main test", b"v3.23/main TEST")
    with pytest.raises(apk.ApkError, match=r"^bad signature: \.SIGN\.RSA\.test\.rsa\.pub"):
        apk.parse_index(members[0].raw + apk.gzip_member(content), pub(keys[0]))


def test_index_signed_with_another_key(keys, package):
    data = apk.build_index([apk.record_for(package)], private_key=keys[1], key_name=KEY)
    with pytest.raises(apk.ApkError, match="of that name"):
        apk.parse_index(data, pub(keys[0]))
    data = apk.build_index([apk.record_for(package)], private_key=keys[1], key_name="x.rsa.pub")
    with pytest.raises(
        apk.ApkError,
        match=r"^untrusted signature: \.SIGN\.RSA\.x\.rsa\.pub names the key "
        r"'x\.rsa\.pub', which is not any given public key \(test\.rsa\.pub\)",
    ):
        apk.parse_index(data, pub(keys[0]))


def index_member(apkindex: str, extra: tuple[tuple[str, bytes], ...] = ()) -> bytes:
    tar = b"".join(apk.tar_file(n, d, mtime=0) for n, d in extra)
    tar += apk.tar_file("APKINDEX", apkindex.encode(), mtime=0) + apk.EOF_BLOCKS
    return apk.gzip_member(tar)


def signed(member: bytes, private: bytes) -> bytes:
    return apk.signature_member(apk.sign(member, private, KEY), mtime=0) + member


GOOD = "C:Q1" + base64.b64encode(b"\1" * 20).decode() + "\nP:a\nV:1-r0\nS:10\nI:20\n\n"


@pytest.mark.parametrize(
    "data_of, message",
    [
        (lambda k: b"PK\3\4 not gzip", "not gzip"),
        (lambda k: index_member(GOOD), "missing signature member"),
        (
            lambda k: (
                apk.gzip_member(
                    apk.tar_file(".SIGN.RSA.a.pub", b"s", mtime=0)
                    + apk.tar_file(".SIGN.RSA.b.pub", b"s", mtime=0)
                )
                + index_member(GOOD)
            ),
            "2 signature entries",
        ),
        (lambda k: apk.signature_member(apk.sign(b"x", k, KEY), mtime=0), "nothing follows"),
        (lambda k: signed(index_member(GOOD), k) + b"junk", "trailing bytes"),
        (
            lambda k: (
                apk.gzip_member(
                    apk.tar_file(f".SIGN.RSA.{KEY}", apk.sign(index_member(GOOD), k, KEY).value, mtime=0)
                    + apk.EOF_BLOCKS
                )
                + index_member(GOOD)
            ),
            "signature member keeps its tar end-of-archive blocks",
        ),
        (lambda k: signed(index_member(GOOD), k)[:-20], "truncated"),
        (
            lambda k: signed(apk.gzip_member(apk.tar_file("DESCRIPTION", b"d", mtime=0) + apk.EOF_BLOCKS), k),
            "missing APKINDEX",
        ),
        (lambda k: signed(index_member(GOOD, ((".PKGINFO", b"pkgname = a\n"),)), k), "package entry"),
        (lambda k: signed(index_member(GOOD.replace("S:10\n", "")), k), r"record 1 \(a-1-r0\) has no S:"),
        (lambda k: signed(index_member(GOOD.replace("C:Q1", "C:Q1!")), k), "malformed C"),
        (lambda k: signed(index_member(GOOD.replace("C:Q1", "C:X1")), k), "malformed C"),
        (lambda k: signed(index_member(GOOD.replace("I:20", "I:2x")), k), "I: is not a non-negative"),
        (lambda k: signed(index_member(GOOD.replace("I:20", "I:20\nI:21")), k), "repeats I:"),
        (lambda k: signed(index_member(GOOD.replace("P:a", "Pa")), k), "line 2 is not 'K:value'"),
    ],
)
def test_index_defects_have_precise_reasons(keys, data_of, message):
    with pytest.raises(apk.ApkError, match=message) as info:
        apk.parse_index(data_of(keys[0]), pub(keys[0]))
    assert isinstance(info.value, HttpbenchError) and "\n" not in str(info.value)


def test_identity_decoding():
    q1 = "Q1" + base64.b64encode(b"\xab" * 20).decode()
    assert apk.parse_identity(q1) == apk.Identity("Q1", b"\xab" * 20)
    assert apk.parse_identity(q1).algorithm == "sha1" and apk.parse_identity(q1).text == q1
    q2 = "Q2" + base64.b64encode(b"\xcd" * 32).decode()
    assert (apk.parse_identity(q2).kind, apk.parse_identity(q2).algorithm) == ("Q2", "sha256")
    assert apk.identity_of(b"abc", "Q2").digest == hashlib.sha256(b"abc").digest()
    for bad, reason in [
        ("", "does not start"),
        ("Q3" + q1[2:], "does not start"),
        ("Q1" + base64.b64encode(b"\1" * 19).decode(), "20 bytes"),
        ("Q2" + q1[2:], "32 bytes"),
        ("Q1****", "not valid base64"),
        (q1[:-1], "not valid base64"),
        (q1[:-1] + "+", "21"),
        (q1[:-2] + "F=", "not canonical"),
    ]:
        with pytest.raises(apk.ApkError, match=reason):
            apk.parse_identity(bad)


def test_q2_identities_are_accepted_in_an_index(keys):
    record = GOOD.replace(
        "C:Q1" + base64.b64encode(b"\1" * 20).decode(), "C:Q2" + base64.b64encode(b"\2" * 32).decode()
    )
    parsed = apk.parse_index(signed(index_member(record), keys[0]), pub(keys[0]))
    assert apk.parse_identity(parsed.records[0].identity).kind == "Q2"


def test_records_keep_unknown_fields_in_order():
    text = GOOD.replace("I:20\n", "I:20\nD:so:libc.musl-x86_64.so.1 busybox\np:cmd:foo=1\nk:10\n")
    record = apk.parse_records(text)[0]
    assert record.other == (("D", "so:libc.musl-x86_64.so.1 busybox"), ("p", "cmd:foo=1"), ("k", "10"))
    assert apk.index_text([record]) == text


def test_bad_keys_and_names_are_clear(keys):
    with pytest.raises(apk.ApkError, match="'k.pub' is not a PEM public key"):
        apk.load_public_key(b"nope", "k.pub")
    with pytest.raises(apk.ApkError, match="bad key name"):
        apk.sign(b"x", keys[0], "a/b")
    with pytest.raises(apk.ApkError, match="unsupported algorithm 'DSA'"):
        apk.parse_signature_name(".SIGN.DSA.k.pub")
    with pytest.raises(apk.ApkError, match="bad file path"):
        apk.build_package({"../etc/passwd": b"x"}, META, private_key=None)


def test_versions_sort_as_apk_orders_them():
    ordered = [
        "0.9",
        "1.0_alpha",
        "1.0_alpha2",
        "1.0_beta1",
        "1.0_pre1",
        "1.0_rc1",
        "1.0",
        "1.0-r1",
        "1.0-r10",
        "1.0_p1",
        "1.0a",
        "1.0.1",
        "1.2",
        "1.10",
        "2.0_rc1-r3",
    ]
    shuffled = sorted(ordered, key=lambda v: hash(v) % 97)
    assert sorted(shuffled, key=apk.version_key) == ordered
    assert apk.version_key("not a version") < apk.version_key("0")
