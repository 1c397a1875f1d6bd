import Crypto
import Foundation

/// SHA-256 digests as lowercase hexadecimal strings, the form the test server reports an
/// upload's digest in and the tests compare it with. The hashing is swift-crypto's `SHA256`.
public enum HexDigest {
    /// The SHA-256 digest of `bytes`.
    public static func sha256(_ bytes: some DataProtocol) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// The SHA-256 digest of the file at `url`, read 1 MiB at a time.
    public static func sha256(ofFileAt url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
        }
        return hex(hasher.finalize())
    }

    /// Bytes (a digest) as a lowercase hexadecimal string.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        var result = ""
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return result
    }
}
