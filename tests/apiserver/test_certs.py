"""The generated PKI: a CA, a serving certificate it signed, reuse and re-issue."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from fleetkeeper.apiserver.certs import ensure_certificates


class Fixed:
    def __init__(self, when: datetime) -> None:
        self.when = when

    def now(self) -> datetime:
        return self.when

    def monotonic(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        return None


NOW = datetime(2026, 6, 1, tzinfo=UTC)


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_a_ca_signs_a_serving_certificate_for_loopback(tmp_path: Path) -> None:
    files = ensure_certificates(tmp_path, clock=Fixed(NOW), hosts=["fleet.example"])
    ca, cert = load(files.ca_cert), load(files.cert)
    public = ca.public_key()
    assert isinstance(public, ec.EllipticCurvePublicKey)
    public.verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))  # type: ignore[arg-type]
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in san.get_values_for_type(x509.IPAddress)
    assert {"localhost", "fleet.example"} <= set(san.get_values_for_type(x509.DNSName))
    assert cert.not_valid_before_utc < NOW < cert.not_valid_after_utc
    assert (tmp_path / "ca.key").stat().st_mode & 0o777 == 0o600 and files.key.stat().st_mode & 0o777 == 0o600


def test_a_second_start_reuses_the_files(tmp_path: Path) -> None:
    first = ensure_certificates(tmp_path, clock=Fixed(NOW))
    before = first.cert.read_bytes(), first.ca_cert.read_bytes()
    again = ensure_certificates(tmp_path, clock=Fixed(NOW + timedelta(days=1)))
    assert (again.cert.read_bytes(), again.ca_cert.read_bytes()) == before


def test_a_new_host_or_near_expiry_re_issues_the_serving_certificate_only(tmp_path: Path) -> None:
    first = ensure_certificates(tmp_path, clock=Fixed(NOW))
    ca, cert = first.ca_cert.read_bytes(), first.cert.read_bytes()
    widened = ensure_certificates(tmp_path, clock=Fixed(NOW), hosts=["10.0.0.1"])
    assert widened.ca_cert.read_bytes() == ca and widened.cert.read_bytes() != cert
    renewed = ensure_certificates(tmp_path, clock=Fixed(NOW + timedelta(days=350)), hosts=["10.0.0.1"])
    assert load(renewed.cert).not_valid_after_utc > NOW + timedelta(days=700)
