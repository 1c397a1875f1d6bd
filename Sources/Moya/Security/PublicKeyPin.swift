import Foundation
import NIOSSL

/// A pinned public key: the SHA-256 digest of a DER `SubjectPublicKeyInfo` (SPKI), the value
/// HPKP called `pin-sha256` and OkHttp writes as `sha256/…`. Used by
/// ``PublicKeysTrustEvaluator``.
///
/// Make one from the base64 digest, or let Moya compute it from the server's certificate or
/// public key:
///
/// ```swift
/// let fromBase64 = try PublicKeyPin(base64: "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=")
/// let fromCertificate = try PublicKeyPin(certificate: TLSCertificate(contentsOf: serverCertURL))
/// let fromKey = try PublicKeyPin(publicKeyPEM: Data(contentsOf: publicKeyURL))
/// ```
///
/// The base64 value for a server can be computed with openssl:
///
/// ```sh
/// openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der \
///   | openssl dgst -sha256 -binary | base64
/// ```
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte SHA-256 digest of the DER `SubjectPublicKeyInfo`.
    public let sha256: Data

    /// A pin from the raw 32-byte digest.
    ///
    /// - Throws: ``TLSError/invalidPublicKey(_:)`` when `sha256` is not 32 bytes long.
    public init(sha256: Data) throws {
        guard sha256.count == 32 else {
            throw TLSError.invalidPublicKey("a SHA-256 pin is 32 bytes long, not \(sha256.count)")
        }
        self.sha256 = sha256
    }

    /// A pin from its base64 form (HPKP's `pin-sha256`). A leading `sha256/` (OkHttp's
    /// notation) is accepted too.
    ///
    /// - Throws: ``TLSError/invalidPublicKey(_:)`` when the text is not the base64 of 32 bytes.
    public init(base64: String) throws {
        var text = base64.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("sha256/") { text.removeFirst("sha256/".count) }
        guard let digest = Data(base64Encoded: text) else {
            throw TLSError.invalidPublicKey("\"\(base64)\" is not base64")
        }
        try self.init(sha256: digest)
    }

    /// The pin of a DER `SubjectPublicKeyInfo`.
    ///
    /// - Throws: ``TLSError/invalidPublicKey(_:)`` when the bytes are not a DER sequence.
    public init(subjectPublicKeyInfoDER der: Data) throws {
        // An SPKI is a DER SEQUENCE; a full check would need an ASN.1 parser, and a wrong value
        // merely never matches.
        guard der.count > 2, der.first == 0x30 else {
            throw TLSError.invalidPublicKey("the data is not a DER SubjectPublicKeyInfo")
        }
        self.sha256 = Data(SHA256Digest.hash(Array(der)))
    }

    /// The pin of a PEM public key (a `-----BEGIN PUBLIC KEY-----` block, as written by
    /// `openssl pkey -pubout`).
    ///
    /// - Throws: ``TLSError/invalidPublicKey(_:)`` when there is no such block.
    public init(publicKeyPEM pem: Data) throws {
        let text = String(decoding: pem, as: UTF8.self)
        let begin = "-----BEGIN PUBLIC KEY-----"
        let end = "-----END PUBLIC KEY-----"
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else {
            throw TLSError.invalidPublicKey("no \(begin) block in the PEM data")
        }
        let body = text[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
        guard let der = Data(base64Encoded: String(body)) else {
            throw TLSError.invalidPublicKey("the PEM block is not base64")
        }
        try self.init(subjectPublicKeyInfoDER: der)
    }

    /// The pin of a certificate's public key.
    ///
    /// - Throws: ``TLSError/invalidPublicKey(_:)`` when the key cannot be extracted.
    public init(certificate: TLSCertificate) throws {
        let nioCertificate: NIOSSLCertificate
        do {
            nioCertificate = try certificate.nioCertificate
        } catch {
            throw TLSError.invalidCertificate("\(error)")
        }
        try self.init(nioCertificate: nioCertificate)
    }

    init(nioCertificate: NIOSSLCertificate) throws {
        let spki: [UInt8]
        do {
            spki = try nioCertificate.extractPublicKey().toSPKIBytes()
        } catch {
            throw TLSError.invalidPublicKey("the certificate's public key could not be read: \(error)")
        }
        try self.init(subjectPublicKeyInfoDER: Data(spki))
    }

    /// The digest in base64, the form ``init(base64:)`` reads.
    public var base64EncodedString: String { sha256.base64EncodedString() }

    /// `sha256/` and the base64 digest.
    public var description: String { "sha256/" + base64EncodedString }
}
