extension MockServer {
    /// Where a ``MockServer`` listens and what it speaks.
    public struct Configuration: Sendable {
        /// The IPv4 or IPv6 address to listen on. Default: `127.0.0.1`. Another loopback address
        /// (`127.0.0.2`) makes a server of another origin on the same machine.
        public var host: String
        /// The port; `0` (the default) takes a free one, read back from ``MockServer/port``.
        public var port: Int
        /// TLS settings, or `nil` (the default) for plain HTTP.
        public var tls: TLS?
        /// Whether a TLS server offers HTTP/2 by ALPN (it then speaks whichever the client
        /// picks). Default: `true`. Plain HTTP is always HTTP/1.1.
        public var offersHTTP2: Bool
        /// How many body bytes of each request are kept in ``MockRequest/body``. Longer bodies
        /// are still read to the end and counted in ``MockRequest/bodyLength``. Default: 16 MiB.
        public var maximumRecordedBodySize: Int

        /// Creates a configuration; every argument has the default described on its property.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            tls: TLS? = nil,
            offersHTTP2: Bool = true,
            maximumRecordedBodySize: Int = 16 * 1024 * 1024
        ) {
            self.host = host
            self.port = port
            self.tls = tls
            self.offersHTTP2 = offersHTTP2
            self.maximumRecordedBodySize = maximumRecordedBodySize
        }

        /// A server on `127.0.0.1` speaking HTTPS with ``MockServer/certificatePEM``, which a
        /// session trusts with `Session.Configuration(tls: .mockServer)`.
        public static var https: Configuration {
            Configuration(tls: .localhost)
        }
    }

    /// The certificate a TLS ``MockServer`` presents, and the clients it accepts.
    public struct TLS: Sendable {
        /// The server's certificate chain, leaf first, in PEM.
        public var certificateChainPEM: String
        /// The private key of the leaf certificate, in PEM.
        public var privateKeyPEM: String
        /// When set, only clients presenting a certificate that leads to one of these (PEM)
        /// complete the handshake: mutual TLS. Default: `nil`, no client certificate asked.
        public var trustedClientCertificatesPEM: [String]?

        /// Creates TLS settings from PEM text.
        public init(certificateChainPEM: String, privateKeyPEM: String, trustedClientCertificatesPEM: [String]? = nil) {
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
            self.trustedClientCertificatesPEM = trustedClientCertificatesPEM
        }

        /// ``MockServer/certificatePEM`` and its key: valid for `127.0.0.1` and `localhost`
        /// until 2126, and self-signed.
        public static var localhost: TLS {
            TLS(certificateChainPEM: MockServer.certificatePEM, privateKeyPEM: MockServer.privateKeyPEM)
        }
    }
}
