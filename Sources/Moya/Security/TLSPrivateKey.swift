import Foundation
import NIOSSL

/// A private key for a client certificate, in PEM or DER form (unencrypted).
public struct TLSPrivateKey: Sendable, Hashable {
    /// The key as given.
    public let data: Data
    /// Whether ``data`` is PEM (otherwise DER).
    public let isPEM: Bool

    /// Reads a PEM key (`BEGIN PRIVATE KEY`, `BEGIN EC PRIVATE KEY`, `BEGIN RSA PRIVATE KEY`).
    ///
    /// - Throws: ``TLSError/invalidPrivateKey(_:)``.
    public init(pem: Data) throws {
        self.data = pem
        self.isPEM = true
        _ = try nioKey
    }

    /// Reads a DER key.
    ///
    /// - Throws: ``TLSError/invalidPrivateKey(_:)``.
    public init(der: Data) throws {
        self.data = der
        self.isPEM = false
        _ = try nioKey
    }

    /// Reads a key file, PEM or DER (tried in that order).
    ///
    /// - Throws: ``TLSError/unreadableFile(_:_:)`` or ``TLSError/invalidPrivateKey(_:)``.
    public init(contentsOf url: URL) throws {
        let data = try TLSError.contentsOfFile(at: url)
        if let pem = try? TLSPrivateKey(pem: data) {
            self = pem
        } else {
            try self.init(der: data)
        }
    }

    var nioKey: NIOSSLPrivateKey {
        get throws {
            do {
                return try NIOSSLPrivateKey(bytes: Array(data), format: isPEM ? .pem : .der)
            } catch {
                throw TLSError.invalidPrivateKey("\(error)")
            }
        }
    }
}
