"""Alpine APK v2 packages and signed ``APKINDEX.tar.gz`` indexes, built and checked as bytes.

The v2 format is a concatenation of gzip members that, once decompressed back to back, read as one
tar stream. That is why every member except the last has its tar end-of-archive blocks cut off.

A package (``.apk``), as abuild writes it::

    [signature]  gzip( tar: ".SIGN.RSA.<key file name>"  )   EOF blocks cut
    [control]    gzip( tar: ".PKGINFO" (+ install scripts) ) EOF blocks cut
    [data]       gzip( tar: the installed files )             EOF blocks kept

* The signature entry holds an RSA PKCS#1 v1.5 signature over the *compressed bytes of the control
  member*: SHA-1 for ``.SIGN.RSA.``, SHA-256 for ``.SIGN.RSA256.``, SHA-512 for ``.SIGN.RSA512.``.
  The rest of the entry name is the file name of the public key under ``/etc/apk/keys``
  (conventionally ``<name>.rsa.pub``); apk-tools looks the key up by that name.
* ``.PKGINFO`` is ``key = value`` lines (``pkgname``, ``pkgver``, ``arch``, ``size`` = installed
  size, …) and ``datahash`` = SHA-256 hex of the *compressed* data member(s), which is how the
  signature over the control member extends to the payload.
* The data tar carries, per regular file, a PAX record ``APK-TOOLS.checksum.SHA1`` (hex SHA-1 of
  the file), as ``abuild-tar --hash`` adds.
* The package identity apk-tools writes into the index as ``C:`` is ``Q1`` + base64(SHA-1 of the
  compressed control member). ``apk`` checks a downloaded package against it, so a wrong ``C:``
  makes installs fail. ``Q2`` + base64(SHA-256) is the 32-byte form.

A signed index (``APKINDEX.tar.gz``)::

    [signature]  gzip( tar: ".SIGN.RSA.<key file name>" )    EOF blocks cut
    [index]      gzip( tar: "DESCRIPTION", "APKINDEX" )      EOF blocks kept

The signature covers every byte after the signature member (``abuild-sign`` signs the unsigned
index file, then prepends the signature member). ``APKINDEX`` holds one record per package:
``K:value`` lines, records separated by a blank line (``C`` identity, ``P`` name, ``V`` version,
``A`` arch, ``S`` .apk size, ``I`` installed size, ``T`` description, ``U`` url, ``L`` license,
``o`` origin, ``m`` maintainer, ``t`` build time, ``c`` commit, ``D``/``p``/``i``/``k`` relations).

Everything here works on bytes in memory; nothing reads or writes files. Every defect raises
:class:`~httpbench.errors.ApkError` with a one-line reason.

Modules, each importing only those before it: :mod:`~httpbench.profiles.alpine.apk.identity`
(``Q1``/``Q2`` identities), :mod:`~httpbench.profiles.alpine.apk.archive` (gzip members, tar
entries), :mod:`~httpbench.profiles.alpine.apk.signing` (signatures, keys),
:mod:`~httpbench.profiles.alpine.apk.package` (packages, versions) and
:mod:`~httpbench.profiles.alpine.apk.index` (signed indexes). Their public names are re-exported
here, so callers use ``apk.X``.
"""

from __future__ import annotations

from httpbench.errors import ApkError
from httpbench.profiles.alpine.apk.archive import (
    BLOCK,
    EOF_BLOCKS,
    GZIP_MAGIC,
    MAX_DECOMPRESSED_FLOOR,
    MAX_DECOMPRESSED_RATIO,
    GzipMember,
    TarEntry,
    decompressed_limit,
    gzip_member,
    read_tar,
    split_members,
    tar_directory,
    tar_file,
    tar_is_cut,
)
from httpbench.profiles.alpine.apk.identity import IDENTITY_KINDS, Identity, identity_of, parse_identity
from httpbench.profiles.alpine.apk.index import (
    REQUIRED_INDEX_KEYS,
    IndexRecord,
    SignedIndex,
    build_index,
    index_text,
    parse_index,
    parse_records,
    record_for,
)
from httpbench.profiles.alpine.apk.package import (
    CHECKSUM_PAX_KEY,
    Package,
    PackageMeta,
    build_package,
    build_sized_package,
    data_member,
    package_identity,
    parse_pkginfo,
    payload,
    pkginfo_text,
    read_package,
    verify_package,
    version_key,
)
from httpbench.profiles.alpine.apk.signing import (
    SIGN_PREFIX,
    SIGNATURE_DIGESTS,
    PublicKeys,
    Signature,
    generate_private_key,
    load_public_key,
    parse_signature_name,
    public_key_pem,
    sign,
    signature_member,
    verify,
)

__all__ = [
    "BLOCK",
    "CHECKSUM_PAX_KEY",
    "EOF_BLOCKS",
    "GZIP_MAGIC",
    "IDENTITY_KINDS",
    "MAX_DECOMPRESSED_FLOOR",
    "MAX_DECOMPRESSED_RATIO",
    "REQUIRED_INDEX_KEYS",
    "SIGNATURE_DIGESTS",
    "SIGN_PREFIX",
    "ApkError",
    "GzipMember",
    "Identity",
    "IndexRecord",
    "Package",
    "PackageMeta",
    "PublicKeys",
    "Signature",
    "SignedIndex",
    "TarEntry",
    "build_index",
    "build_package",
    "build_sized_package",
    "data_member",
    "decompressed_limit",
    "generate_private_key",
    "gzip_member",
    "identity_of",
    "index_text",
    "load_public_key",
    "package_identity",
    "parse_identity",
    "parse_index",
    "parse_pkginfo",
    "parse_records",
    "parse_signature_name",
    "payload",
    "pkginfo_text",
    "public_key_pem",
    "read_package",
    "read_tar",
    "record_for",
    "sign",
    "signature_member",
    "split_members",
    "tar_directory",
    "tar_file",
    "tar_is_cut",
    "verify",
    "verify_package",
    "version_key",
]
