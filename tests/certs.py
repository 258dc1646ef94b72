"""A test CA and the certificates signed by it (the API server's serving certificate, client certificates for
its users, the webhooks' serving certificates), made with openssl or, without it, with the cryptography package."""
from __future__ import annotations

import datetime
import secrets
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from .tool_errors import ToolUnavailable


class CertMaker:
    """The CA in ``workdir`` (make_ca) and certificates it signs (issue)."""

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.ca_crt = workdir / "ca.crt"
        self.ca_key = workdir / "ca.key"
        self._openssl = shutil.which("openssl")
        if self._openssl is None:
            try:
                import cryptography  # noqa: F401
            except ImportError as exc:
                raise ToolUnavailable("neither the openssl CLI nor the `cryptography` package is available") from exc

    def _ossl(self, *args: str) -> None:
        subprocess.run(
            [self._openssl, *args],  # type: ignore[list-item]
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=self.dir,
        )

    def make_ca(self) -> None:
        if self._openssl:
            self._ossl(
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650",
                "-keyout", str(self.ca_key), "-out", str(self.ca_crt), "-subj", "/CN=kf2jobset-test-ca",
            )  # fmt: skip
        else:
            self._py_issue(self.ca_crt, self.ca_key, "kf2jobset-test-ca", (), ca=True)

    def make_keypair(self, name: str) -> tuple[Path, Path]:
        """RSA key pair for service-account token signing: (private.pem, public.pem)."""
        key, pub = self.dir / f"{name}.key", self.dir / f"{name}.pub"
        if self._openssl:
            self._ossl("genrsa", "-out", str(key), "2048")
            self._ossl("rsa", "-in", str(key), "-pubout", "-out", str(pub))
        else:
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import rsa

            k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            key.write_bytes(
                k.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.TraditionalOpenSSL,
                    serialization.NoEncryption(),
                )
            )
            pub.write_bytes(
                k.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            )
        return key, pub

    def issue(self, stem: str, cn: str, orgs: Iterable[str] = (), server: bool = False) -> tuple[Path, Path]:
        crt, key = self.dir / f"{stem}.crt", self.dir / f"{stem}.key"
        orgs = tuple(orgs)
        if self._openssl:
            subj = "".join(f"/O={_dn_escape(o)}" for o in orgs) + f"/CN={_dn_escape(cn)}"
            csr, ext = self.dir / f"{stem}.csr", self.dir / f"{stem}.ext"
            if server:
                ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
            else:
                ext.write_text("extendedKeyUsage=clientAuth\n")
            self._ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr), "-subj", subj)
            self._ossl(
                "x509", "-req", "-in", str(csr), "-CA", str(self.ca_crt), "-CAkey", str(self.ca_key),
                "-set_serial", str(secrets.randbits(63)), "-days", "3650", "-out", str(crt),
                "-extfile", str(ext),
            )  # fmt: skip
        else:
            self._py_issue(crt, key, cn, orgs, server=server)
        return crt, key

    def _py_issue(self, crt: Path, key: Path, cn: str, orgs: tuple[str, ...], *, ca=False, server=False):
        import ipaddress

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        subject = x509.Name(
            [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
            + [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
        )
        now = datetime.datetime.now(datetime.timezone.utc)
        if ca:
            issuer, signer = subject, k
        else:
            ca_cert = x509.load_pem_x509_certificate(self.ca_crt.read_bytes())
            issuer = ca_cert.subject
            signer = serialization.load_pem_private_key(self.ca_key.read_bytes(), password=None)
        b = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(issuer)
            .public_key(k.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=3650))
        )
        if ca:
            b = b.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            b = b.add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
            )
        elif server:
            b = b.add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
                ),
                critical=False,
            )
            b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        else:
            b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        cert = b.sign(signer, hashes.SHA256())
        crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key.write_bytes(
            k.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            )
        )


def _dn_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("/", "\\/").replace("=", "\\=").replace("+", "\\+")
