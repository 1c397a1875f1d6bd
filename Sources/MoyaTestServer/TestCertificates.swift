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
    /// The certificate the HTTPS test server presents (PEM).
    public static let serverCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBtzCCAV2gAwIBAgIUdmfDGalzhmZAdNotR4bbTYMxYlAwCgYIKoZIzj0EAwIw
        IjEgMB4GA1UEAwwXTW95YSBUZXN0IFNlcnZlciBzZXJ2ZXIwIBcNMjYxMTIyMDEy
        OTE4WhgPMjEyNjEwMjkwMTI5MThaMCIxIDAeBgNVBAMMF01veWEgVGVzdCBTZXJ2
        ZXIgc2VydmVyMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYmn0Q/G+kITuIJGZ
        pu8Datn31/NnNq0LvI3wfsrIHyf5M6pgTJXCLoHDSF6Buq2hzmlpzM/E0FtoX4Dd
        Yt4ABqNvMG0wHQYDVR0OBBYEFKjpPjubZ4AMW+T2nCd1sR9QE5YmMB8GA1UdIwQY
        MBaAFKjpPjubZ4AMW+T2nCd1sR9QE5YmMBoGA1UdEQQTMBGHBH8AAAGCCWxvY2Fs
        aG9zdDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIHDP1yGBbcfR
        glT4/I2f4oh9+Sk4xWc+Dr78GU9xYQnfAiEA+5/mRPAKwBafFm8UX45dIfkfuE1T
        s4UNyMxVP2RXNFQ=
        -----END CERTIFICATE-----
        """

    /// The private key of ``serverCertificatePEM`` (PEM).
    public static let serverPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgmQE/dtU0s2m/vVTA
        7YZ/tIuw8cVoro+wfg/EFZOaFumhRANCAARiafRD8b6QhO4gkZmm7wNq2ffX82c2
        rQu8jfB+ysgfJ/kzqmBMlcIugcNIXoG6raHOaWnMz8TQW2hfgN1i3gAG
        -----END PRIVATE KEY-----
        """

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
