import Crypto
import Foundation
import MoyaTestServer

/// A fresh directory for one test, deleted when released.
final class TemporaryDirectory: Sendable {
    let url: URL

    init(in parent: URL = FileManager.default.temporaryDirectory) throws {
        url = parent.appendingPathComponent("moya-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    /// The names of the files in the directory (recursively), sorted.
    var contents: [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: url.path) else { return [] }
        return enumerator.compactMap { $0 as? String }.sorted()
    }

    /// Writes `length` pseudo-random bytes to `name` without holding them all in memory, and
    /// returns the file's URL. Each MiB is one fixed random block stamped with its index, so
    /// every chunk differs and runs repeat.
    @discardableResult
    func makeFile(_ name: String, length: Int) throws -> URL {
        let fileURL = file(name)
        _ = FileManager.default.createFile(atPath: fileURL.path, contents: nil)
        let handle = try FileHandle(forWritingTo: fileURL)
        defer { try? handle.close() }
        var chunk = TemporaryDirectory.randomBlock
        var remaining = length
        var index: UInt64 = 0
        while remaining > 0 {
            withUnsafeBytes(of: index.littleEndian) { stamp in
                for offset in 0..<stamp.count { chunk[offset] = stamp[offset] }
            }
            let count = min(remaining, chunk.count)
            try handle.write(contentsOf: chunk[0..<count])
            remaining -= count
            index += 1
        }
        return fileURL
    }

    private static let randomBlock: [UInt8] = {
        var state: UInt64 = 42
        return (0..<(1 << 20)).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }()
}

/// The SHA-256 (hex) of the test server's `/bytes/n` body: byte `i` is `i % 251`.
func patternDigest(length: Int) -> String {
    var hasher = SHA256()
    let period = Data((0..<251).map { UInt8($0) })
    var remaining = length
    while remaining > 0 {
        let take = min(remaining, period.count)
        hasher.update(data: period.prefix(take))
        remaining -= take
    }
    return HexDigest.hex(hasher.finalize())
}
