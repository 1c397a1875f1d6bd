import Foundation
import NIOSSL

/// An X.509 certificate, for trust roots, client identities and pinning. Holds the DER bytes.
///
/// ```swift
/// let root = try TLSCertificate(pem: Data(contentsOf: rootURL))
/// ```
public struct TLSCertificate: Sendable, Hashable {
    /// The certificate in DER form.
    public let derData: Data

    /// Reads one certificate in DER form.
    ///
    /// - Throws: ``TLSError/invalidCertificate(_:)`` when the bytes are not a certificate.
    public init(der: Data) throws {
        do {
            _ = try NIOSSLCertificate(bytes: Array(der), format: .der)
        } catch {
            throw TLSError.invalidCertificate("\(error)")
        }
        self.derData = der
    }

    /// Reads every certificate in PEM data (one or more `BEGIN CERTIFICATE` blocks).
    ///
    /// - Throws: ``TLSError/invalidCertificate(_:)`` when there is none or one is malformed.
    public static func certificates(pem: Data) throws -> [TLSCertificate] {
        let parsed: [NIOSSLCertificate]
        do {
            parsed = try NIOSSLCertificate.fromPEMBytes(Array(pem))
        } catch {
            throw TLSError.invalidCertificate("\(error)")
        }
        guard !parsed.isEmpty else { throw TLSError.invalidCertificate("no certificate in the PEM data") }
        return try parsed.map { try TLSCertificate(nioCertificate: $0) }
    }

    /// Reads the first certificate in PEM data.
    ///
    /// - Throws: ``TLSError/invalidCertificate(_:)`` when there is none or it is malformed.
    public init(pem: Data) throws {
        self = try TLSCertificate.certificates(pem: pem)[0]
    }

    /// Reads a certificate file, PEM or DER (tried in that order).
    ///
    /// - Throws: ``TLSError/unreadableFile(_:_:)`` or ``TLSError/invalidCertificate(_:)``.
    public init(contentsOf url: URL) throws {
        let data = try TLSError.contentsOfFile(at: url)
        if let pem = try? TLSCertificate(pem: data) {
            self = pem
        } else {
            try self.init(der: data)
        }
    }

    /// Every certificate in a bundle's resources: the files ending in `.cer`, `.crt`, `.der`
    /// or `.pem` (any case), in the order of their names. Files that are not certificates are
    /// skipped. This is where Alamofire's `PinnedCertificatesTrustEvaluator()` looks by default.
    ///
    /// - Parameter bundle: The bundle to search, usually `.main` or `.module`.
    /// - Returns: The certificates found; empty when there are none.
    public static func certificates(in bundle: Bundle) -> [TLSCertificate] {
        let extensions: Set<String> = ["cer", "crt", "der", "pem"]
        let paths = extensions.union(extensions.map { $0.uppercased() }).flatMap {
            bundle.paths(forResourcesOfType: $0, inDirectory: nil)
        }
        return Set(paths).sorted().compactMap { try? TLSCertificate(contentsOf: URL(fileURLWithPath: $0)) }
    }

    init(nioCertificate: NIOSSLCertificate) throws {
        do {
            self.derData = Data(try nioCertificate.toDERBytes())
        } catch {
            throw TLSError.invalidCertificate("\(error)")
        }
    }

    var nioCertificate: NIOSSLCertificate {
        // The bytes were validated when this value was made.
        get throws { try NIOSSLCertificate(bytes: Array(derData), format: .der) }
    }
}
