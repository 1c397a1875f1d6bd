import Foundation
import Moya

extension MockServer {
    /// The self-signed certificate of a ``MockServer`` started with ``Configuration/https`` (PEM):
    /// valid for `127.0.0.1` and `localhost` until 2126.
    ///
    /// It protects nothing: its private key is ``privateKeyPEM``, public in this library. Trust
    /// it in test sessions only, as `TLSSettings.mockServer` does.
    public static let certificatePEM = """
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

    /// The private key of ``certificatePEM`` (PEM). Public on purpose: the certificate is for
    /// tests only.
    public static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgmQE/dtU0s2m/vVTA
        7YZ/tIuw8cVoro+wfg/EFZOaFumhRANCAARiafRD8b6QhO4gkZmm7wNq2ffX82c2
        rQu8jfB+ysgfJ/kzqmBMlcIugcNIXoG6raHOaWnMz8TQW2hfgN1i3gAG
        -----END PRIVATE KEY-----
        """

    /// ``certificatePEM`` as a Moya `TLSCertificate`, for `TLSSettings` and pins.
    public static var certificate: TLSCertificate {
        // The PEM above is a constant that the kit's own tests parse; it cannot fail here.
        // Parsed on each use rather than kept in a global: a global `Data` hides its storage
        // pointer in enum spare bits, and LeakSanitizer then reports it as leaked in every
        // user's test run.
        try! TLSCertificate(pem: Data(certificatePEM.utf8))
    }
}

extension TLSSettings {
    /// Settings that trust only ``MockServer/certificatePEM``, the certificate of a
    /// ``MockServer`` started with ``MockServer/Configuration/https``:
    /// `Session(configuration: .init(tls: .mockServer))`.
    public static var mockServer: TLSSettings {
        TLSSettings(trustRoots: .certificates([MockServer.certificate]))
    }
}
