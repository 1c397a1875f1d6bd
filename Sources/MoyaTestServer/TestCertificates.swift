import MoyaTesting

/// A self-signed certificate and key pair for the HTTPS test server, and a second unrelated
/// pair for "wrong pin" tests.
///
/// Generated once with OpenSSL (P-256 keys, valid for 100 years, `subjectAltName` 127.0.0.1
/// and localhost) and committed: they protect nothing and exist only for the tests.
///
/// ```sh
/// openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
///   -keyout server.key -out server.pem -days 36500 -subj "/CN=Moya Test Server server" \
///   -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -addext "basicConstraints=critical,CA:TRUE"
/// ```
public enum TestCertificates {
    /// The certificate the HTTPS test server presents (PEM): MoyaTesting's
    /// `MockServer.certificatePEM`.
    public static let serverCertificatePEM = MockServer.certificatePEM

    /// The private key of ``serverCertificatePEM`` (PEM).
    public static let serverPrivateKeyPEM = MockServer.privateKeyPEM

    /// An unrelated self-signed certificate (PEM), for pins that must not match.
    public static let otherCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBtTCCAVugAwIBAgIUeLq1pNgT3JPF3ybFzLQi18tKyuYwCgYIKoZIzj0EAwIw
        ITEfMB0GA1UEAwwWTW95YSBUZXN0IFNlcnZlciBvdGhlcjAgFw0yNjExMjIwMTI5
        MThaGA8yMTI2MTAyOTAxMjkxOFowITEfMB0GA1UEAwwWTW95YSBUZXN0IFNlcnZl
        ciBvdGhlcjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABA0SOBlViCdfxqiXeCnH
        gpfizdUr6kNH/0d9j9QLURFxWh1ZORIrEW4Cbefm7Nc1ytsNrDVMiXgabyFgXZ8K
        lxijbzBtMB0GA1UdDgQWBBQlSkIiivpW4G/RztKiMHTaiPVv/jAfBgNVHSMEGDAW
        gBQlSkIiivpW4G/RztKiMHTaiPVv/jAaBgNVHREEEzARhwR/AAABgglsb2NhbGhv
        c3QwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEAs74A1YSnfR9N
        0hss1/YIpgx2G3yimRg4TLJWe5FE0RMCIBnc3hFffKQ0KLX+oiUFhRyleTULP10S
        eXGN+tc3Qc4b
        -----END CERTIFICATE-----
        """

    /// The private key of ``otherCertificatePEM`` (PEM); the client identity in mutual-TLS tests.
    public static let otherPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwPbJVCaaCTqz4eKZ
        IMgywoOmo8iBRB6ozpqdgyhFuSyhRANCAAQNEjgZVYgnX8aol3gpx4KX4s3VK+pD
        R/9HfY/UC1ERcVodWTkSKxFuAm3n5uzXNcrbDaw1TIl4Gm8hYF2fCpcY
        -----END PRIVATE KEY-----
        """
}
