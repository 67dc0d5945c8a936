"""TLS material for the API server: a private CA and a serving certificate.

kubectl sends bearer tokens only over TLS (never over plain http), so the API server
always serves HTTPS. On first start :func:`ensure_certificates` creates, in a state
directory, a CA (``ca.crt``/``ca.key``) and a serving certificate signed by it
(``apiserver.crt``/``apiserver.key``) whose subject alternative names cover the
addresses clients use (``127.0.0.1``, ``::1``, ``localhost`` and any extra host).
Later starts reuse them; the serving certificate alone is re-issued when it no longer
covers the requested hosts or is within :data:`RENEW_BEFORE` of expiry. Kubeconfigs
embed the CA (``certificate-authority-data``), so clients verify the server.

Replicas sharing a store share one CA and one serving certificate instead
(:mod:`fleetkeeper.apiserver.identity` keeps them there); the PEM-level functions
below (:func:`new_ca`, :func:`issue_serving`, :func:`serving_fits`, :func:`write_tls`)
are what it uses.

Keys are ECDSA P-256 (small, fast, accepted by Go's TLS stack) and written ``0600``.
Validity starts an hour before the clock's ``now`` to tolerate skew. Supplying one's
own files works too: :class:`TLSFiles` just names three paths.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from fleetkeeper.clock import Clock

CA_VALIDITY = timedelta(days=3650)
SERVING_VALIDITY = timedelta(days=365)
RENEW_BEFORE = timedelta(days=30)
DEFAULT_HOSTS: tuple[str, ...] = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class TLSFiles:
    """Where the CA certificate and the serving certificate and key are."""

    ca_cert: Path
    cert: Path
    key: Path

    def ca_pem(self) -> bytes:
        """The CA certificate, PEM (what a kubeconfig embeds)."""
        return self.ca_cert.read_bytes()


def _write(path: Path, data: bytes, *, private: bool) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _san(hosts: Sequence[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def _new_ca(now: datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fleetkeeper-ca")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1)).not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _new_serving(
    ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, hosts: Sequence[str], now: datetime
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fleetkeeper-apiserver")]))
        .issuer_name(ca.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1)).not_valid_after(now + SERVING_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(_san(hosts), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def _serving_ok(path: Path, hosts: Sequence[str], now: datetime) -> bool:
    if not path.exists():
        return False
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    if cert.not_valid_after_utc - RENEW_BEFORE < now:
        return False
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    have = {str(v) for v in san.get_values_for_type(x509.IPAddress)}
    have |= set(san.get_values_for_type(x509.DNSName))
    want = {str(ipaddress.ip_address(h)) if _is_ip(h) else h for h in hosts}
    return want <= have


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- PEM, for a shared store


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, PEM (what a ``kubernetes.io/tls`` Secret holds)."""

    cert: bytes
    key: bytes


def _load_key(pem: bytes) -> ec.EllipticCurvePrivateKey:
    loaded = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(loaded, ec.EllipticCurvePrivateKey):
        raise ValueError("expected an EC private key")
    return loaded


def new_ca(clock: Clock) -> KeyPair:
    """A fresh CA."""
    cert, key = _new_ca(clock.now())
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def issue_serving(ca: KeyPair, hosts: Sequence[str], *, clock: Clock) -> KeyPair:
    """A serving certificate signed by ``ca`` for :data:`DEFAULT_HOSTS` and ``hosts``."""
    all_hosts = tuple(dict.fromkeys((*DEFAULT_HOSTS, *hosts)))
    cert, key = _new_serving(x509.load_pem_x509_certificate(ca.cert), _load_key(ca.key), all_hosts,
                             clock.now())
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def certificate_hosts(pem: bytes) -> list[str]:
    """The addresses and names a certificate is valid for (its subject alternative names)."""
    cert = x509.load_pem_x509_certificate(pem)
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    addresses = [str(v) for v in san.get_values_for_type(x509.IPAddress)]
    return [*addresses, *san.get_values_for_type(x509.DNSName)]


def serving_fits(serving: KeyPair, ca: KeyPair, hosts: Sequence[str], *, clock: Clock) -> bool:
    """Whether ``serving`` was signed by ``ca``, covers ``hosts`` and is not due for renewal."""
    cert = x509.load_pem_x509_certificate(serving.cert)
    authority = x509.load_pem_x509_certificate(ca.cert)
    if cert.issuer != authority.subject or cert.not_valid_after_utc - RENEW_BEFORE < clock.now():
        return False
    try:
        cert.verify_directly_issued_by(authority)
    except (ValueError, TypeError, InvalidSignature):
        return False
    have = set(certificate_hosts(serving.cert))
    return {str(ipaddress.ip_address(h)) if _is_ip(h) else h for h in (*DEFAULT_HOSTS, *hosts)} <= have


def write_tls(directory: Path, ca_cert: bytes, serving: KeyPair) -> TLSFiles:
    """Write the CA certificate and the serving pair into ``directory`` (the key ``0600``): what the
    server loads and kubeconfigs embed."""
    directory.mkdir(parents=True, exist_ok=True)
    files = TLSFiles(directory / "ca.crt", directory / "apiserver.crt", directory / "apiserver.key")
    _write(files.key, serving.key, private=True)
    _write(files.cert, serving.cert, private=False)
    _write(files.ca_cert, ca_cert, private=False)
    return files


def ensure_certificates(directory: Path, *, clock: Clock, hosts: Sequence[str] = ()) -> TLSFiles:
    """Create (or reuse) the CA and serving certificate in ``directory``; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    files = TLSFiles(directory / "ca.crt", directory / "apiserver.crt", directory / "apiserver.key")
    ca_key_path = directory / "ca.key"
    all_hosts = tuple(dict.fromkeys((*DEFAULT_HOSTS, *hosts)))
    now = clock.now()
    fresh_ca = False
    if files.ca_cert.exists() and ca_key_path.exists():
        ca = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
        loaded = serialization.load_pem_private_key(ca_key_path.read_bytes(), password=None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{ca_key_path}: expected an EC private key")
        ca_key = loaded
    else:
        ca, ca_key = _new_ca(now)
        fresh_ca = True
        _write(ca_key_path, _key_pem(ca_key), private=True)
        _write(files.ca_cert, ca.public_bytes(serialization.Encoding.PEM), private=False)
    if fresh_ca or not (files.key.exists() and _serving_ok(files.cert, all_hosts, now)):
        cert, key = _new_serving(ca, ca_key, all_hosts, now)
        _write(files.key, _key_pem(key), private=True)
        _write(files.cert, cert.public_bytes(serialization.Encoding.PEM), private=False)
    return files


__all__ = [
    "CA_VALIDITY", "DEFAULT_HOSTS", "RENEW_BEFORE", "SERVING_VALIDITY", "KeyPair", "TLSFiles",
    "certificate_hosts", "ensure_certificates", "issue_serving", "new_ca", "serving_fits", "write_tls",
]
